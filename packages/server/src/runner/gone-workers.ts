/**
 * Worker pool ids (`host-pid-random`) and what they say on one machine: a pool of this host whose process no
 * longer exists is gone, so a restart can requeue its tasks at once rather than wait for their leases.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

export function newWorkerId(host = hostname(), pid = process.pid): string {
  return `${host}-${pid}-${randomBytes(3).toString('hex')}`;
}

/** Whether a process exists (signal 0 only checks; EPERM means it exists under another user). */
function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The pools among `owners` that ran on this host in a process that is gone. A reused pid reads as alive, and
 * then the lease decides, as before.
 */
export function goneLocalWorkers(
  owners: readonly string[],
  host = hostname(),
  exists: (pid: number) => boolean = processExists,
): string[] {
  return owners.filter((owner) => {
    const match = /^(.*)-(\d+)-[0-9a-f]{6}$/.exec(owner);
    if (!match || match[1] !== host) return false;
    const pid = Number(match[2]);
    return pid !== process.pid && !exists(pid);
  });
}

/**
 * The process group an `exec` engine's command runs in (spawned detached, so the command and everything it
 * starts share one group): signalling it, and ending it with SIGTERM then SIGKILL.
 */
import { readdir, readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

/** How long the group has between SIGTERM and SIGKILL. */
export const KILL_GRACE_MS = 2000;
const GROUP_POLL_MS = 50;

/** Sends `signal` to process group `pid`; false when the group has no process left. */
export function signalGroup(pid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/**
 * Whether any process of group `pid` is still running. Orphans that died stay zombies until their new parent
 * reaps them, and some init processes (a container's, a sandbox's) never do; a signal still "reaches" a
 * zombie, so on Linux the group's members are looked up in /proc to leave zombies out.
 */
export async function groupRunning(pid: number): Promise<boolean> {
  if (!signalGroup(pid, 0)) return false;
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return true;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    // After the command name, in parentheses: state, parent pid, process group.
    const [state, , group] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(group) === pid && state !== 'Z' && state !== 'X') return true;
  }
  return false;
}

/** SIGTERM to the group, SIGKILL after the grace period if any of it is still running. */
export async function endGroup(pid: number): Promise<void> {
  if (!signalGroup(pid, 'SIGTERM')) return;
  const until = Date.now() + KILL_GRACE_MS;
  do {
    if (!(await groupRunning(pid))) return;
    await sleep(GROUP_POLL_MS);
  } while (Date.now() < until);
  signalGroup(pid, 'SIGKILL');
}

/**
 * The process group an `exec` engine's command runs in (spawned detached, so the command and everything it
 * starts share one group): signalling it, ending it with SIGTERM then SIGKILL, and guarding it with a
 * guardian process (group-guardian.ts) that ends it if the worker dies first.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

/** How long the group has between SIGTERM and SIGKILL. */
export const KILL_GRACE_MS = 2000;
const GROUP_POLL_MS = 50;
/** What the worker writes to a guardian before closing its stdin when the group needs no guarding any more. */
export const RELEASE_LINE = 'released\n';
const GUARDIAN_PATH = fileURLToPath(new URL('./group-guardian.js', import.meta.url));

/** Sends `signal` to process group `pid`; false when the group has no process left. */
export function signalGroup(pid: number, signal: NodeJS.Signals | 0): boolean {
  // kill(-1) signals every process the user may signal, kill(-0) the caller's own group.
  if (!Number.isSafeInteger(pid) || pid <= 1) throw new RangeError(`not a process group id: ${pid}`);
  try {
    process.kill(-pid, signal);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** State and process group from /proc/<pid>/stat; undefined when there is no such process (or no /proc). */
async function procStat(pid: string | number): Promise<{ state: string; group: number } | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  if (!stat) return undefined;
  // After the command name, in parentheses: state, parent pid, process group.
  const [state = '', , group] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state, group: Number(group) };
}

const isLive = (state: string) => state !== 'Z' && state !== 'X';

/**
 * Whether any process of group `pid` is still running. Orphans that died stay zombies until their new parent
 * reaps them, and some init processes (a container's, a sandbox's) never do; a signal still "reaches" a
 * zombie, so on Linux the group's members are looked up in /proc to leave zombies out.
 */
export async function groupRunning(pid: number): Promise<boolean> {
  if (!signalGroup(pid, 0)) return false;
  // The common case, cheaply: the leader itself still runs (its pid cannot be reused while the group exists).
  const leader = await procStat(pid);
  if (leader && leader.group === pid && isLive(leader.state)) return true;
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return true;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const member = await procStat(entry);
    if (member && member.group === pid && isLive(member.state)) return true;
  }
  return false;
}

/**
 * How long, after SIGKILL, the group's processes are waited for. SIGKILL cannot be refused, but its
 * processes still have to be scheduled to exit (seconds on a loaded machine) and one in uninterruptible
 * sleep (a hung disk or GPU driver) exits only when that call returns; past this the caller goes on.
 */
export const KILLED_EXIT_WAIT_MS = 10_000;

/** Polls until no process of group `pid` runs, or `until` (a Date.now() value) has passed; true when gone. */
async function groupGoneBy(pid: number, until: number): Promise<boolean> {
  for (;;) {
    if (!(await groupRunning(pid))) return true;
    if (Date.now() >= until) return false;
    await sleep(GROUP_POLL_MS);
  }
}

/**
 * SIGTERM to the group, SIGKILL after the grace period if any of it is still running; resolves once none of
 * it runs (or KILLED_EXIT_WAIT_MS after the SIGKILL), so what comes next never races a dying process.
 */
export async function endGroup(pid: number): Promise<void> {
  if (!signalGroup(pid, 'SIGTERM')) return;
  if (await groupGoneBy(pid, Date.now() + KILL_GRACE_MS)) return;
  signalGroup(pid, 'SIGKILL');
  await groupGoneBy(pid, Date.now() + KILLED_EXIT_WAIT_MS);
}

/** A running guardian, as the worker sees it. */
export interface GroupGuard {
  /** Resolves (never rejects) if the guardian could not start or ended before `release`, leaving the group unguarded. */
  readonly lost: Promise<Error>;
  /** Tells the guardian to exit without touching the group; call once the group has been ended. */
  release(): void;
}

/**
 * Starts a guardian for process group `pid`: a small Node process, in a session of its own, whose stdin is
 * a pipe from this process. The kernel closes this end when this process dies however it dies (SIGKILL,
 * a crash, the OOM killer), and the guardian then ends the group. Throws if it cannot be spawned at all.
 * Neither the guardian nor its pipe keeps this process's event loop alive.
 */
export function guardGroup(pid: number): GroupGuard {
  // Not NODE_OPTIONS: an --inspect or a --require meant for the worker would break or bloat the guardian.
  const { NODE_OPTIONS: _, ...env } = process.env;
  const guardian: ChildProcess = spawn(process.execPath, [GUARDIAN_PATH, String(pid)], {
    cwd: '/',
    env,
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
    windowsHide: true,
  });
  guardian.unref();
  const stdin = guardian.stdin as Socket | null;
  stdin?.unref();
  // A guardian that has already exited (its group was gone) makes the release write fail with EPIPE.
  stdin?.on('error', () => {});
  let released = false;
  const lost = new Promise<Error>((resolveLost) => {
    guardian.once('error', (error) => {
      if (!released) resolveLost(new Error(`could not be started: ${error.message}`, { cause: error }));
    });
    guardian.once('exit', (code, signal) => {
      // Exit code 0: released, or the group had no running process left.
      if (released || code === 0) return;
      resolveLost(new Error(signal ? `was killed by ${signal}` : `exited with code ${code}`));
    });
  });
  return {
    lost,
    release() {
      if (released) return;
      released = true;
      stdin?.end(RELEASE_LINE);
    },
  };
}

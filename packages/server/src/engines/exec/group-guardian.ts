/**
 * The guardian of one `exec` command's process group: `node group-guardian.js <process group id>`, started by
 * the worker right after the command (guardGroup in process-group.ts), in a session of its own. Its stdin is
 * a pipe from the worker, which the kernel closes however the worker ends, SIGKILL included:
 *   - the line "released" on stdin: the worker has dealt with the group itself; exit, touching nothing;
 *   - end of stdin without it: the worker is gone; end the group (SIGTERM, SIGKILL two seconds later if
 *     anything is left) and exit;
 *   - the group has no running process left (checked every second): nothing to guard; exit.
 * Exit code 0 in all three cases (1 if ending the group failed), 2 for a bad argument.
 */
import { endGroup, groupRunning, RELEASE_LINE } from './process-group.js';

const POLL_MS = 1000;

const arg = process.argv[2] ?? '';
const group = Number(arg);
// 0 and 1 would make the group signals mean "this process's group" and "every process".
if (!/^\d+$/.test(arg) || !Number.isSafeInteger(group) || group <= 1) {
  process.stderr.write(`group-guardian: not a process group id: "${arg}"\n`);
  process.exit(2);
}

let ending: Promise<void> | undefined;
function endGroupAndExit(): void {
  ending ??= endGroup(group).then(
    () => process.exit(0),
    () => process.exit(1),
  );
}

// Ctrl-C in the worker's terminal sends SIGINT to the terminal's foreground group, a closed terminal SIGHUP.
// Being in a session of its own, the guardian normally gets neither; if one reaches it anyway (a signal sent
// to a whole tree of processes), it must not die of it: what a Ctrl-C does to a running command is for the
// worker's graceful shutdown to decide, and a guardian dead before its worker would leave the command
// unguarded. It needs no signal to end: it goes with its worker, through the pipe.
process.on('SIGINT', () => {});
process.on('SIGHUP', () => {});
// A guardian stopped deliberately (`kill`, a system shutdown) takes its group with it rather than leave it
// unguarded.
process.on('SIGTERM', endGroupAndExit);

let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk: string) => {
  input = (input + chunk).slice(-2 * RELEASE_LINE.length);
  if (!ending && input.includes(RELEASE_LINE)) process.exit(0);
});
process.stdin.on('end', endGroupAndExit);
process.stdin.on('error', endGroupAndExit);

async function poll(): Promise<void> {
  const running = await groupRunning(group).catch(() => true);
  if (ending) return;
  if (!running) process.exit(0);
  setTimeout(poll, POLL_MS).unref();
}
setTimeout(poll, POLL_MS).unref();

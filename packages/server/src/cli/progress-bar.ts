/**
 * A task's progress on a terminal: one line redrawn in place. Only when the stream is a TTY; in a pipe, a
 * log file or CI it writes nothing, so captured output holds no carriage returns or escape codes.
 */
import type { Task } from '@videogen/client';

export interface ProgressDisplay {
  update(task: Task): void;
  /** Ends the line (when anything was drawn). */
  finish(): void;
}

const BAR_WIDTH = 30;

export function progressBar(stream: NodeJS.WriteStream = process.stderr): ProgressDisplay {
  if (!stream.isTTY) return { update: () => undefined, finish: () => undefined };
  let drawn = false;
  return {
    update(task) {
      // Clamped: a server answering a progress outside 0 to 100 must not make `repeat` throw.
      const percent = Math.min(100, Math.max(0, Number(task.progress) || 0));
      const filled = Math.round((percent / 100) * BAR_WIDTH);
      const bar = `${'█'.repeat(filled)}${'░'.repeat(BAR_WIDTH - filled)}`;
      const line = `${bar} ${String(percent).padStart(3)}%  ${task.status}  ${task.id}`;
      // Carriage return and "erase line", then the new state.
      stream.write(`\r\x1b[2K${line.slice(0, Math.max(20, (stream.columns || 80) - 1))}`);
      drawn = true;
    },
    finish() {
      if (drawn) stream.write('\n');
      drawn = false;
    },
  };
}

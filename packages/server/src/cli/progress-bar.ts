/**
 * A task's progress on a terminal: one line redrawn in place. Only when the stream is a TTY; in a pipe, a
 * log file or CI it writes nothing, so captured output holds no carriage returns or escape codes.
 *
 * The task id is always shown whole, since it is what a reader copies: the bar narrows to leave it room, and
 * on a terminal too narrow for the id beside the percentage and status, the id gets a line of its own above.
 */
import type { Task } from '@videogen/client';

export interface ProgressDisplay {
  update(task: Task): void;
  /** Ends the line (when anything was drawn). */
  finish(): void;
}

/** What the display writes to: a terminal's stream. */
export type ProgressStream = Pick<NodeJS.WriteStream, 'isTTY' | 'columns' | 'write'>;

const BAR_WIDTH = 30;
/** Narrower than this, a bar says nothing the percentage does not: left out. */
const MIN_BAR_WIDTH = 5;
/** The longest status, so that the layout chosen at the first update fits every later one. */
const LONGEST_STATUS = 'processing';

export function progressBar(stream: ProgressStream = process.stderr): ProgressDisplay {
  if (!stream.isTTY) return { update: () => undefined, finish: () => undefined };
  let drawn = false;
  /** The task whose id has a line of its own, when it has. */
  let idAbove: string | undefined;
  return {
    update(task) {
      // The last column stays empty: writing into it makes some terminals wrap.
      const width = Math.max(20, (stream.columns || 80) - 1);
      // Clamped: a server answering a progress outside 0 to 100 must not make `repeat` throw.
      const percent = Math.min(100, Math.max(0, Number(task.progress) || 0));
      if (idAbove !== task.id && `100%  ${LONGEST_STATUS}  ${task.id}`.length > width) {
        stream.write(`${drawn ? '\r\x1b[2K' : ''}${task.id}\n`);
        idAbove = task.id;
      }
      const id = idAbove === task.id ? '' : `  ${task.id}`;
      const text = `${String(percent).padStart(3)}%  ${task.status}${id}`;
      // Of one width whatever the status, so that the bar does not jump as it changes.
      const barWidth = Math.min(BAR_WIDTH, width - `100%  ${LONGEST_STATUS}${id}`.length - 1);
      const filled = Math.round((percent / 100) * barWidth);
      const line =
        barWidth >= MIN_BAR_WIDTH ? `${'█'.repeat(filled)}${'░'.repeat(barWidth - filled)} ${text}` : text;
      // Carriage return and "erase line", then the new state.
      stream.write(`\r\x1b[2K${line.slice(0, width)}`);
      drawn = true;
    },
    finish() {
      if (drawn) stream.write('\n');
      drawn = false;
    },
  };
}

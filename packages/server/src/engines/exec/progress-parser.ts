/**
 * Progress read from a generator's stdout and stderr: tqdm bars (`45%|████▌     | 9/20 [00:03<00:04]`),
 * bare percentages (`45%`) and step counts (`step 9/20`). tqdm redraws its bar after a `\r`, so lines end at
 * either `\r` or `\n`, and a line is read only once it is complete.
 *
 * A run usually shows several bars in turn (weights loading, denoising, decoding). The fraction is the highest
 * seen, so it never goes back; lines whose label speaks of loading or downloading (`Loading checkpoint
 * shards: 100%|…`) are skipped, since a bar that fills before the work starts would otherwise end the
 * progress at once.
 */

/** A line longer than this without an end is not a progress line; it is dropped rather than kept growing. */
const MAX_PENDING_CHARS = 4096;

/** Colour and cursor codes (tqdm moves the cursor for nested bars). */
const ANSI_ESCAPE = new RegExp(`${String.fromCharCode(27)}\\[[0-9;?]*[A-Za-z]`, 'g');
/** tqdm: the percentage, the bar between pipes, then `n/total`. */
const TQDM_BAR = /(\d{1,3}(?:\.\d+)?)%\s*\|[^|]*\|\s*(\d+(?:\.\d+)?)\s*\/\s*(\d+(?:\.\d+)?)/;
/** A percentage standing on its own: `45%`, `[45.5%]`, `progress: 45 %`. */
const PERCENT = /(?:^|[\s:[(])(\d{1,3}(?:\.\d+)?)\s?%(?=$|[\s|\])])/;
const STEPS = /\b(?:step|iteration|iter)s?\s*[:#]?\s*\[?\s*(\d+)\s*\/\s*(\d+)/i;
const LOADING = /load|fetch|download|shard|checkpoint/i;

function fraction(done: number, total: number): number | undefined {
  if (!(total > 0) || !(done >= 0)) return undefined;
  return Math.min(1, done / total);
}

/** The fraction one complete output line shows, if any. */
export function parseProgressLine(raw: string): number | undefined {
  const line = raw.replace(ANSI_ESCAPE, '');
  const bar = TQDM_BAR.exec(line);
  if (bar) {
    if (LOADING.test(line.slice(0, bar.index))) return undefined;
    return fraction(Number(bar[2]), Number(bar[3])) ?? fraction(Number(bar[1]), 100);
  }
  const steps = STEPS.exec(line);
  if (steps) {
    if (LOADING.test(line.slice(0, steps.index))) return undefined;
    return fraction(Number(steps[1]), Number(steps[2]));
  }
  const percent = PERCENT.exec(line);
  if (percent) {
    const value = Number(percent[1]);
    if (value > 100 || LOADING.test(line.slice(0, percent.index))) return undefined;
    return fraction(value, 100);
  }
  return undefined;
}

export class ProgressParser {
  #highest = 0;
  readonly #pending = new Map<string, string>();

  /** The highest fraction seen so far, 0..1. */
  get fraction(): number {
    return this.#highest;
  }

  /**
   * Reads a chunk of the stream named `stream` (each stream keeps its own unfinished line). Returns the new
   * fraction when it rose, otherwise undefined.
   */
  push(stream: string, chunk: string): number | undefined {
    const lines = ((this.#pending.get(stream) ?? '') + chunk).split(/[\r\n]/);
    const rest = lines.pop() ?? '';
    this.#pending.set(stream, rest.length > MAX_PENDING_CHARS ? '' : rest);
    const before = this.#highest;
    for (const line of lines) {
      const value = parseProgressLine(line);
      if (value !== undefined && value > this.#highest) this.#highest = value;
    }
    return this.#highest > before ? this.#highest : undefined;
  }
}

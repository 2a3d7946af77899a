/**
 * Turns the phases of a run into task progress: assets 0-5 %, rendering 5-95 %, storing 95-99 %.
 * Writes only when the whole percent rises, at most every `intervalMs`, and never more than one at a time.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { runningProgress } from '../domain/task.js';

export type Phase = 'assets' | 'render' | 'store';

const PHASES: Record<Phase, [number, number]> = {
  assets: [0, 0.05],
  render: [0.05, 0.95],
  store: [0.95, 0.99],
};

export class ProgressReporter {
  readonly #write: (progress: number) => Promise<unknown>;
  readonly #intervalMs: number;
  #reported = 0;
  #latest = 0;
  #lastWriteAt = 0;
  #writing: Promise<unknown> | undefined;

  constructor(write: (progress: number) => Promise<unknown>, intervalMs = 250) {
    this.#write = write;
    this.#intervalMs = intervalMs;
  }

  update(phase: Phase, fraction: number): void {
    const [from, to] = PHASES[phase];
    const progress = runningProgress(from + (to - from) * Math.max(0, Math.min(1, fraction)));
    if (progress <= this.#latest) return;
    this.#latest = progress;
    const now = Date.now();
    if (this.#writing || now - this.#lastWriteAt < this.#intervalMs) return;
    this.#flush(now);
  }

  #flush(now: number): void {
    const progress = this.#latest;
    if (progress <= this.#reported) return;
    this.#lastWriteAt = now;
    this.#reported = progress;
    // On the event loop's next turn: what the run does next (its engine's start) is not held behind the write,
    // which on SQLite runs on this thread (0.2 of the 0.5 ms from claim to engine,
    // docs/benchmarks.md#dispatch-phases).
    this.#writing = nextTurn()
      .then(() => this.#write(progress))
      .catch(() => {})
      .finally(() => {
        this.#writing = undefined;
      });
  }

  /** Waits for an in-flight write, so a later status change cannot be overtaken by it. */
  async settle(): Promise<void> {
    await this.#writing;
  }
}

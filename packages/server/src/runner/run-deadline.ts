/**
 * When a run's time limit runs out, which moves with the phase the task is in. Preparing and submitting the job
 * and, after the upstream is done, fetching and conforming its result are the worker's own work, bounded by the
 * task timeout (`VIDEOGEN_TASK_TIMEOUT_SECONDS`) from when the phase began. While an upstream job works, the
 * limit is that engine's `job_timeout_seconds` from the job's submission, whichever run resumes it: a provider
 * that is busy may take hours, and a limit meant for a render on this machine would fail (and cancel) a job
 * the client is paying for.
 */
export class RunDeadline {
  #at: number;
  #limit: string;
  #timer: NodeJS.Timeout | undefined;
  readonly #onExpired: () => void;

  /** `onExpired` is called once the limit passes, unless it has been moved on or cleared before. */
  constructor(at: number, limit: string, onExpired: () => void) {
    this.#at = at;
    this.#limit = limit;
    this.#onExpired = onExpired;
    this.#schedule();
  }

  /** When the limit runs out (epoch ms). */
  get at(): number {
    return this.#at;
  }

  /** The limit that applies now, as the task's error message says it: `within 900 s`. */
  get limit(): string {
    return this.#limit;
  }

  /** Makes `at` the limit from now on, described by `limit`. */
  moveTo(at: number, limit: string): void {
    this.#at = at;
    this.#limit = limit;
    this.#schedule();
  }

  clear(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #schedule(): void {
    clearTimeout(this.#timer);
    // Node fires a delay past 2^31 - 1 ms at once; such a limit is re-armed when that long delay ends.
    const delay = Math.min(Math.max(0, this.#at - Date.now()), MAX_TIMER_MS);
    this.#timer = setTimeout(() => {
      if (Date.now() >= this.#at) this.#onExpired();
      else this.#schedule();
    }, delay);
  }
}

const MAX_TIMER_MS = 2 ** 31 - 1;

/** `24 h`, `900 s`: a limit as a person reads it. */
export function describeDuration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  return seconds >= 3600 && seconds % 3600 === 0 ? `${seconds / 3600} h` : `${seconds} s`;
}

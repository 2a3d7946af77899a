/**
 * Requests counted per subject in fixed windows: the per-key rate limit's arithmetic (http/rate-limit.ts), and
 * the dashboard's sign-ins per client address (accounts/dashboard-sessions.ts). It replaced
 * `@fastify/rate-limit`, whose check builds the route's options object, awaits the key generator and wraps the
 * store's callback in a promise on every request, work a poll (`GET /v1/tasks/{id}`) does not need
 * (docs/benchmarks.md#hot-paths-polling-and-creation). The counting is the
 * plugin's LocalStore's: a window starts with a subject's first request and admits `max` requests; the one
 * after is refused until the window ends.
 *
 * Windows are kept in the order they started (a new window is a delete and a set), so the first entries are
 * always the oldest: ended windows are dropped from the front as new ones start, and past `maxSubjects` the
 * oldest window goes even if it has not ended (its subject starts afresh: the bound trades exactness for memory
 * when more subjects are active at once than it allows).
 */

export interface WindowCount {
  /** Requests counted in the current window, this one included. */
  readonly count: number;
  /** Milliseconds until the window ends. */
  readonly remainingMs: number;
}

interface Window {
  readonly startedAt: number;
  count: number;
}

export class FixedWindows {
  readonly #windowMs: number;
  readonly #maxSubjects: number;
  readonly #now: () => number;
  readonly #windows = new Map<string, Window>();

  constructor(options: { windowMs: number; maxSubjects: number; now?: () => number }) {
    this.#windowMs = options.windowMs;
    this.#maxSubjects = options.maxSubjects;
    this.#now = options.now ?? Date.now;
  }

  /** Subjects with a window kept now. */
  get size(): number {
    return this.#windows.size;
  }

  /** Counts one request of `subject`. */
  hit(subject: string): WindowCount {
    const now = this.#now();
    let window = this.#windows.get(subject);
    if (window === undefined || now >= window.startedAt + this.#windowMs) {
      if (window !== undefined) this.#windows.delete(subject);
      this.#dropEnded(now);
      window = { startedAt: now, count: 0 };
      this.#windows.set(subject, window);
    }
    window.count += 1;
    return { count: window.count, remainingMs: window.startedAt + this.#windowMs - now };
  }

  #dropEnded(now: number): void {
    for (const [subject, window] of this.#windows) {
      if (now < window.startedAt + this.#windowMs && this.#windows.size < this.#maxSubjects) return;
      this.#windows.delete(subject);
    }
  }
}

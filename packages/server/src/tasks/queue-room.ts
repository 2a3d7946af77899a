/**
 * The global queue cap (`VIDEOGEN_MAX_QUEUED_TASKS`): whether one more task may be created. Counting the pending
 * tasks on every creation cost more than the creation itself once the queue was deep (a count over 20 000 rows
 * per request), so the count is taken at most every `QUEUE_RECOUNT_MS` and this process's own admissions since
 * are added to it.
 *
 * How exact that is: this process never admits past the cap by its own creations, however many arrive at once
 * (admitting is synchronous once there is a count). What it cannot see are the other API processes' creations
 * since its last count began: with several API processes the queue may pass the cap by what the others admit in
 * one recount interval plus one count, a count being renewed behind the creations it admits (each of them is
 * held to the cap the same way). The count lags the other
 * way too: tasks claimed since the last count still take room, so a creation may be refused up to that long
 * after room opened, and a creation admitted but then not made (a failed request, an idempotent replay) holds
 * its place until the next count. Before, the count was exact but creations racing at the cap could all pass it.
 */

/** A count of pending tasks this old is renewed. */
export const QUEUE_RECOUNT_MS = 250;

/**
 * The longest a count is used for while it is renewed: a creation that finds room by a count between
 * QUEUE_RECOUNT_MS and this old is admitted at once and the count renewed behind it, since on PostgreSQL
 * waiting for the count was a round trip on the way of every creation that came after the interval. A creation
 * the stale count would refuse waits for the new one, and so does any once the count is this old (a count that
 * keeps failing behind creations then fails them, as it did before).
 */
export const QUEUE_STALE_MS = 1000;

export class QueueRoom {
  readonly #cap: number;
  readonly #countPending: () => Promise<number>;
  readonly #now: () => number;
  /** Pending tasks at the last count, and when that count began. */
  #counted = 0;
  #countedAt = Number.NEGATIVE_INFINITY;
  /** Admissions by this process: all of them, and as many when the last count began. */
  #admitted = 0;
  #admittedAtCount = 0;
  #counting: Promise<void> | undefined;

  constructor(options: { cap: number; countPending: () => Promise<number>; now?: () => number }) {
    this.#cap = options.cap;
    this.#countPending = options.countPending;
    this.#now = options.now ?? Date.now;
  }

  /** Takes a place in the queue for one task; false when the queue is full (0: no cap, always true). */
  async admit(): Promise<boolean> {
    if (this.#cap === 0) return true;
    const age = this.#now() - this.#countedAt;
    if (age >= QUEUE_RECOUNT_MS) {
      if (this.#hasRoom() && age < QUEUE_STALE_MS) this.#recount().catch(() => undefined);
      else await this.#recount();
    }
    if (!this.#hasRoom()) return false;
    this.#admitted += 1;
    return true;
  }

  #hasRoom(): boolean {
    return this.#counted + (this.#admitted - this.#admittedAtCount) < this.#cap;
  }

  /** One count at a time: the creations that find the count stale together wait for the same one. */
  #recount(): Promise<void> {
    this.#counting ??= (async () => {
      const startedAt = this.#now();
      // Admissions from here on may or may not be in the count; they stay added to it, erring towards full.
      const admitted = this.#admitted;
      try {
        this.#counted = await this.#countPending();
        this.#countedAt = startedAt;
        this.#admittedAtCount = admitted;
      } finally {
        this.#counting = undefined;
      }
    })();
    return this.#counting;
  }
}

/**
 * Whether this process's writes are failing for lack of space, for `/readyz`: raised by each write that failed
 * so (a request's, a render's), it stays raised for `holdMs` after the last. A load balancer then sends the
 * process no requests for a while, and once it lapses lets them try again: while the disk is still full they
 * fail and raise it anew. Nothing else clears it: writes that succeed need traffic, which readiness withholds.
 */
export const SPACE_ALARM_HOLD_MS = 30_000;

export class SpaceAlarm {
  readonly #holdMs: number;
  readonly #now: () => number;
  #raisedAt: number | undefined;

  constructor(options: { holdMs?: number; now?: () => number } = {}) {
    this.#holdMs = options.holdMs ?? SPACE_ALARM_HOLD_MS;
    this.#now = options.now ?? Date.now;
  }

  /** A write failed for lack of space. */
  raise(): void {
    this.#raisedAt = this.#now();
  }

  /** A write failed for lack of space less than `holdMs` ago. */
  get raised(): boolean {
    return this.#raisedAt !== undefined && this.#now() - this.#raisedAt < this.#holdMs;
  }
}

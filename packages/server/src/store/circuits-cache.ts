/**
 * The engines' circuit records as the claims of one store last read them, for at most `ttlMs`. On PostgreSQL
 * reading them was one of the two round trips of a claim, on every task's way to a worker. A circuit opened,
 * closed or put on trial by another process is seen within `ttlMs`; this store's own writes to circuits clear
 * the cache at once. Only the one-statement claim goes by it: a circuit's trial and every claim in a
 * transaction (caps, callbacks) read the records afresh, so a trial is still taken by one task only.
 */
import type { CircuitRecord } from '../domain/engine-route.js';

/** As long as a revoked API key may still be taken on another process. */
export const CIRCUITS_TTL_MS = 1000;

export class CircuitsCache {
  readonly #read: () => Promise<Map<string, CircuitRecord>>;
  readonly #now: () => number;
  #records: Promise<Map<string, CircuitRecord>> | undefined;
  #readAt = Number.NEGATIVE_INFINITY;

  constructor(read: () => Promise<Map<string, CircuitRecord>>, now: () => number) {
    this.#read = read;
    this.#now = now;
  }

  records(): Promise<Map<string, CircuitRecord>> {
    const now = this.#now();
    if (!this.#records || now - this.#readAt >= CIRCUITS_TTL_MS || now < this.#readAt) {
      this.#readAt = now;
      const records = this.#read();
      this.#records = records;
      records.catch(() => {
        if (this.#records === records) this.#records = undefined;
      });
    }
    return this.#records;
  }

  /** This store changed a circuit: the next claim reads them again. */
  clear(): void {
    this.#records = undefined;
  }
}

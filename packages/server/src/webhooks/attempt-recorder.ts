/**
 * Group commit for finished attempts: outcomes that come in while the store is busy, or in the same turn of the
 * event loop, are written together in one transaction (`finishDeliveryAttempts`), one commit instead of one each.
 *
 * Nothing is traded for it: an attempt's promise resolves only once its group has committed, so a delivery is
 * never taken for recorded before it is, and an attempt sent but not yet recorded when the process dies is
 * simply sent again once its claim lapses, which at-least-once delivery allows.
 */
import type { FinishedDeliveryAttempt, Store } from '../ports/store.js';

interface Waiting {
  readonly finished: FinishedDeliveryAttempt;
  readonly resolve: (recorded: boolean) => void;
  readonly reject: (error: unknown) => void;
}

export class AttemptRecorder {
  readonly #store: Store;
  #waiting: Waiting[] = [];
  #writing: Promise<void> | undefined;

  constructor(store: Store) {
    this.#store = store;
  }

  /** Resolves once the attempt is committed: true if recorded, false if its claim was no longer current. */
  record(finished: FinishedDeliveryAttempt): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ finished, resolve, reject });
      this.#writing ??= this.#write();
    });
  }

  async #write(): Promise<void> {
    // The others finishing in this turn of the event loop join the first group.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.#waiting.length > 0) {
      const group = this.#waiting;
      this.#waiting = [];
      try {
        const recorded = await this.#store.finishDeliveryAttempts(group.map((w) => w.finished));
        for (const [i, waiting] of group.entries()) waiting.resolve(recorded[i] === true);
      } catch (error) {
        for (const waiting of group) waiting.reject(error);
      }
    }
    this.#writing = undefined;
  }
}

/**
 * Group commit for finished attempts: outcomes that come in within `collectMs` of the first, or while the store
 * is busy with the previous group, are written together in one transaction (`finishDeliveryAttempts`), one
 * commit instead of one each. The dispatcher frees a receiver's slot as soon as it has answered, so the wait
 * delays only the record, not the next request.
 *
 * Nothing is traded for it: an attempt's promise resolves only once its group has committed, so a delivery is
 * never taken for recorded before it is, and an attempt sent but not yet recorded when the process dies is
 * simply sent again once its claim lapses, which at-least-once delivery allows.
 */
import type { DeliveryStore, FinishedDeliveryAttempt } from '../ports/store.js';

interface Waiting {
  readonly finished: FinishedDeliveryAttempt;
  readonly resolve: (recorded: boolean) => void;
  readonly reject: (error: unknown) => void;
}

export class AttemptRecorder {
  readonly #store: DeliveryStore;
  readonly #collectMs: number;
  #waiting: Waiting[] = [];
  #writing: Promise<void> | undefined;

  constructor(store: DeliveryStore, collectMs: number) {
    this.#store = store;
    this.#collectMs = collectMs;
  }

  /** Resolves once the attempt is committed: true if recorded, false if its claim was no longer current. */
  record(finished: FinishedDeliveryAttempt): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ finished, resolve, reject });
      this.#writing ??= this.#write();
    });
  }

  async #write(): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, this.#collectMs));
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

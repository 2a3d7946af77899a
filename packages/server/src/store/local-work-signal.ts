/**
 * The in-process `WorkSignal`, for stores whose claimers all live in one process (SQLite). It is also the
 * listener registry `PgWorkSignal` delivers through, so both call listeners the same way.
 */
import { EventEmitter } from 'node:events';
import { MAX_HINT_LENGTH, type WorkListener, type WorkSignal, type WorkTopic } from '../ports/work-signal.js';

export interface LocalWorkSignalOptions {
  /** Told about a listener that threw; the other listeners are still called. */
  readonly onError?: (error: unknown) => void;
}

export class LocalWorkSignal implements WorkSignal {
  readonly #emitter = new EventEmitter();
  readonly #onError: (error: unknown) => void;
  #closed = false;

  constructor(options: LocalWorkSignalOptions = {}) {
    // One listener per idle worker slot and dispatcher: many, and none of them a leak.
    this.#emitter.setMaxListeners(0);
    this.#onError = options.onError ?? (() => undefined);
  }

  /** Calls the topic's listeners now, synchronously, each guarded so that one throwing stops no other. */
  notify(topic: WorkTopic, hint?: string): Promise<void> {
    if (hint === undefined || hint.length <= MAX_HINT_LENGTH) this.deliver(topic, hint);
    return Promise.resolve();
  }

  subscribe(topic: WorkTopic, listener: WorkListener): () => void {
    if (this.#closed) return () => undefined;
    const guarded = (hint?: string) => {
      try {
        listener(hint);
      } catch (error) {
        this.#onError(error);
      }
    };
    this.#emitter.on(topic, guarded);
    return () => {
      this.#emitter.off(topic, guarded);
    };
  }

  close(): Promise<void> {
    this.#closed = true;
    this.#emitter.removeAllListeners();
    return Promise.resolve();
  }

  /**
   * Calls the listeners of `topic`, with `hint`, in this process only; without a topic, every topic's
   * listeners without a hint (a catch-up).
   */
  deliver(topic?: WorkTopic, hint?: string): void {
    if (this.#closed) return;
    if (topic === undefined) {
      for (const name of this.#emitter.eventNames()) this.#emitter.emit(name);
      return;
    }
    if (hint === undefined) this.#emitter.emit(topic);
    else this.#emitter.emit(topic, hint);
  }
}

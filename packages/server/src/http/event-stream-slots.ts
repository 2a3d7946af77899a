/**
 * How many event streams may be open at once, per key and in the process: a stream holds a connection and a
 * watch for as long as its task runs, and the per-minute rate limit counts it once however long it lasts
 * (three keys within their limits held 1,770 open, issue 33). Each stream also has a lifetime, after which it
 * ends and the client reconnects (with `Last-Event-ID`), so a slot is never held for good.
 */
import type { EventStreamLimits } from '../config.js';
import { ApiError } from '../domain/errors.js';

/** The longest `Retry-After` of a refusal: streams often end long before their lifetime (their tasks end). */
export const MAX_RETRY_AFTER_SECONDS = 30;

interface Slot {
  readonly subject: string;
  /** When the stream's lifetime runs out, in epoch ms. */
  readonly endsAt: number;
}

export interface EventStreamSlot {
  /** How long this stream may last, in ms. */
  readonly lifetimeMs: number;
  /** The stream has ended; calling it again does nothing. */
  release(): void;
}

export class EventStreamSlots {
  readonly #limits: EventStreamLimits;
  readonly #now: () => number;
  readonly #random: () => number;
  readonly #open = new Set<Slot>();
  readonly #bySubject = new Map<string, Set<Slot>>();

  constructor(limits: EventStreamLimits, options: { now?: () => number; random?: () => number } = {}) {
    this.#limits = limits;
    this.#now = options.now ?? Date.now;
    this.#random = options.random ?? Math.random;
  }

  /**
   * A slot for a stream of `subject` (rateLimitSubject); throws `429 rate_limited`, with `Retry-After` the seconds
   * until a stream in the way reaches its lifetime (at most 30), when a cap is reached.
   */
  take(subject: string): EventStreamSlot {
    const { perKey, perProcess } = this.#limits;
    const own = this.#bySubject.get(subject);
    if (perKey > 0 && own && own.size >= perKey) {
      throw this.#refusal(own, `This key has ${own.size} event streams open, the most it may.`);
    }
    if (perProcess > 0 && this.#open.size >= perProcess) {
      throw this.#refusal(this.#open, 'The server has as many event streams open as it takes.');
    }
    const lifetimeMs = Math.round(this.#limits.lifetimeMs * (1 - this.#random() / 10));
    const slot: Slot = { subject, endsAt: this.#now() + lifetimeMs };
    this.#open.add(slot);
    const slots = own ?? new Set<Slot>();
    slots.add(slot);
    this.#bySubject.set(subject, slots);
    return {
      lifetimeMs,
      release: () => {
        this.#open.delete(slot);
        slots.delete(slot);
        if (slots.size === 0 && this.#bySubject.get(subject) === slots) this.#bySubject.delete(subject);
      },
    };
  }

  #refusal(inTheWay: Iterable<Slot>, message: string): ApiError {
    let soonest = Number.POSITIVE_INFINITY;
    for (const slot of inTheWay) soonest = Math.min(soonest, slot.endsAt);
    const seconds = Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, Math.ceil((soonest - this.#now()) / 1000)));
    return new ApiError(
      'rate_limited',
      `${message} Close one, or retry after ${seconds} s; query the task (GET /v1/tasks/{task_id}) meanwhile.`,
      { retryAfterSeconds: seconds },
    );
  }
}

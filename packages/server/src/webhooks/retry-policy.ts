/**
 * When a failed delivery is tried again. The default schedule is the one Standard Webhooks senders use
 * (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h: eight attempts over about 27.6 hours). Each delay is spread by
 * up to ±10 % so that receivers coming back from an outage are not hit by every retry at once; even with
 * every delay at -10 % the last attempt comes more than 24 hours after the first.
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [
  5 * SECOND,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
  10 * HOUR,
];

/** A receiver's `Retry-After` is honoured up to this; beyond it the schedule would stall for days. */
export const MAX_RETRY_AFTER_MS = 24 * HOUR;

export interface RetryPolicy {
  /** Delay after the first failed attempt, the second, …; when exhausted the delivery fails. */
  readonly delaysMs: readonly number[];
  /** Fraction each delay may be moved up or down by, 0..1. */
  readonly jitter: number;
  readonly random?: () => number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { delaysMs: DEFAULT_RETRY_DELAYS_MS, jitter: 0.1 };

/**
 * Milliseconds to wait after failed attempt number `attempt` (1-based), or undefined when that was the last.
 * A `Retry-After` longer than the scheduled delay wins: the receiver asked not to be called sooner.
 */
export function retryDelay(policy: RetryPolicy, attempt: number, retryAfterMs?: number): number | undefined {
  const base = policy.delaysMs[attempt - 1];
  if (base === undefined) return undefined;
  const random = policy.random ?? Math.random;
  const delay = Math.round(base * (1 + policy.jitter * (2 * random() - 1)));
  return retryAfterMs === undefined ? delay : Math.max(delay, Math.min(retryAfterMs, MAX_RETRY_AFTER_MS));
}

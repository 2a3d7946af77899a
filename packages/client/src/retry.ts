/** When to retry a request and how long to wait first: exponential backoff with jitter, or `Retry-After`. */
import {
  ConnectionError,
  parseRetryAfter,
  RateLimitError,
  ServerError,
  type VideogenError,
} from './errors.js';

export interface BackoffOptions {
  /** The first delay, in ms. */
  readonly initialDelayMs: number;
  /** No delay grows beyond this, in ms. */
  readonly maxDelayMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { initialDelayMs: 500, maxDelayMs: 8_000 };

/**
 * Whether `error` is worth another attempt. A 429 is refused before any work is done, so another attempt is
 * always safe. A 5xx answer (the server failing part-way, or a proxy's 502/504 after the request reached the
 * server) and a broken connection leave unknown whether the server acted on it, so they are retried only for
 * idempotent requests (reads, deletions, and creations sent with an `Idempotency-Key`).
 */
export function isRetryable(error: unknown, idempotent: boolean): boolean {
  if (error instanceof RateLimitError) return true;
  return idempotent && (error instanceof ServerError || error instanceof ConnectionError);
}

/** Delay before retry number `retry` (0 for the first): `Retry-After` when the server gave one, else backoff. */
export function retryDelayMs(
  retry: number,
  error: VideogenError | undefined,
  backoff: BackoffOptions = DEFAULT_BACKOFF,
  random: () => number = Math.random,
): number {
  const retryAfterSeconds = error ? retryAfterOf(error) : undefined;
  if (retryAfterSeconds !== undefined) {
    // A little past the moment the server named, so that the retry does not arrive a hair too early.
    return retryAfterSeconds * 1000 + 50 + random() * 200;
  }
  return backoffDelayMs(retry, backoff, random);
}

/** Exponential backoff with "equal jitter": half the step fixed, half random, so clients spread out. */
export function backoffDelayMs(
  retry: number,
  backoff: BackoffOptions = DEFAULT_BACKOFF,
  random: () => number = Math.random,
): number {
  const step = Math.min(backoff.maxDelayMs, backoff.initialDelayMs * 2 ** retry);
  return step / 2 + (random() * step) / 2;
}

function retryAfterOf(error: VideogenError): number | undefined {
  if (error instanceof RateLimitError && error.retryAfter !== undefined) return error.retryAfter;
  return error.headers ? parseRetryAfter(error.headers) : undefined;
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

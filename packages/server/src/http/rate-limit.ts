/**
 * The per-key request rate limit (docs/decisions.md#request-rate): each API key's requests counted in fixed
 * windows (fixed-windows.ts). It runs right after authentication, inside the same preHandler, so it limits every
 * route that needs a key and nothing else: unauthenticated requests (health checks, metrics, signed result
 * links, a missing or wrong key) are never counted against a key.
 *
 * Counters live in this process's memory: behind a load balancer with N API processes a key gets up to N times
 * the limit (docs/deployment.md).
 */
import type { FastifyInstance, preHandlerAsyncHookHandler } from 'fastify';
import { ApiError } from '../domain/errors.js';
import { FixedWindows } from '../domain/fixed-windows.js';
import { principalOf, rateLimitSubject } from './authentication.js';

export interface RateLimitSettings {
  /** Requests per key per minute; 0 turns the limit off. */
  readonly perMinute: number;
  /** Length of one counting window; each admits `perMinute` scaled to it, at least one request. */
  readonly windowMs: number;
}

/** Keys tracked at once; past this the oldest window is forgotten (its key starts a fresh one). */
const TRACKED_KEYS = 10_000;

/** Requests one window admits: the per-minute rate scaled to the window, rounded up. */
export function requestsPerWindow(settings: RateLimitSettings): number {
  return Math.max(1, Math.ceil((settings.perMinute * settings.windowMs) / 60_000));
}

/**
 * `authenticate` followed by the rate limit: the answer carries `RateLimit-Limit`, `RateLimit-Remaining` and
 * `RateLimit-Reset` (seconds until the window ends, IETF draft-ietf-httpapi-ratelimit-headers), and a request
 * over the limit is `429 rate_limited` with `Retry-After` (the same seconds: the next window admits it).
 */
export function withRateLimit(
  authenticate: preHandlerAsyncHookHandler,
  settings: RateLimitSettings,
  now: () => number = Date.now,
): preHandlerAsyncHookHandler {
  if (settings.perMinute === 0) return authenticate;
  const max = requestsPerWindow(settings);
  const windows = new FixedWindows({ windowMs: settings.windowMs, maxSubjects: TRACKED_KEYS, now });

  return async function authenticateAndLimit(this: FastifyInstance, request, reply) {
    await authenticate.call(this, request, reply);
    const { count, remainingMs } = windows.hit(rateLimitSubject(principalOf(request)));
    const resetSeconds = Math.ceil(remainingMs / 1000);
    reply
      .header('ratelimit-limit', max)
      .header('ratelimit-remaining', Math.max(0, max - count))
      .header('ratelimit-reset', resetSeconds);
    if (count > max) {
      throw new ApiError(
        'rate_limited',
        `${principalOf(request).keyId ? 'This API key' : 'This dashboard session'} made more than ${max} requests in ${Math.round(settings.windowMs / 1000)} s; retry after ${resetSeconds} s.`,
        { retryAfterSeconds: resetSeconds },
      );
    }
  };
}

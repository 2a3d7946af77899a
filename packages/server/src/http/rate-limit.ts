/**
 * The per-key request rate limit (docs/decisions.md#request-rate): `@fastify/rate-limit` counting each API
 * key's requests in fixed windows. It runs right after authentication, inside the same preHandler, so it
 * limits every route that needs a key and nothing else: unauthenticated requests (health checks, metrics,
 * signed result links, a missing or wrong key) are never counted against a key.
 *
 * Counters live in this process's memory: behind a load balancer with N API processes a key gets up to N times
 * the limit (docs/deployment.md).
 */
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, preHandlerAsyncHookHandler } from 'fastify';
import { ApiError } from '../domain/errors.js';
import { principalOf, rateLimitSubject } from './authentication.js';

export interface RateLimitSettings {
  /** Requests per key per minute; 0 turns the limit off. */
  readonly perMinute: number;
  /** Length of one counting window; each admits `perMinute` scaled to it, at least one request. */
  readonly windowMs: number;
}

/** Keys tracked at once; the least recently seen beyond this start a fresh window. */
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
  app: FastifyInstance,
  authenticate: preHandlerAsyncHookHandler,
  settings: RateLimitSettings,
): preHandlerAsyncHookHandler {
  if (settings.perMinute === 0) return authenticate;
  const max = requestsPerWindow(settings);
  // Manual mode (`global: false`, no route config): the check below is the only one, whatever routes exist.
  void app.register(rateLimit, {
    global: false,
    max,
    timeWindow: settings.windowMs,
    cache: TRACKED_KEYS,
    keyGenerator: (request) => rateLimitSubject(principalOf(request)),
  });
  let check: ReturnType<FastifyInstance['createRateLimit']> | undefined;

  return async function authenticateAndLimit(this: FastifyInstance, request, reply) {
    await authenticate.call(this, request, reply);
    // The plugin's decorator exists once the app is ready, which it is by the first request.
    check ??= app.createRateLimit();
    const limit = await check(request);
    if (limit.isAllowed) return;
    reply
      .header('ratelimit-limit', limit.max)
      .header('ratelimit-remaining', limit.remaining)
      .header('ratelimit-reset', limit.ttlInSeconds);
    if (limit.isExceeded) {
      throw new ApiError(
        'rate_limited',
        `${principalOf(request).keyId ? 'This API key' : 'This dashboard session'} made more than ${limit.max} requests in ${Math.round(limit.timeWindow / 1000)} s; retry after ${limit.ttlInSeconds} s.`,
        { headers: { 'retry-after': String(limit.ttlInSeconds) } },
      );
    }
  };
}

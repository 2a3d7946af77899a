/** Bearer API key authentication (decisions.md §4): a key resolves to its account and environment. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { hashApiKey } from '../domain/identifiers.js';
import type { TaskScope } from '../domain/task.js';
import { ApiError } from '../errors.js';
import type { Store } from '../ports/store.js';

export interface Principal extends TaskScope {
  readonly keyId: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
}

/** `last_used_at` is advisory; writing it at most once a minute per key keeps polling off the write path. */
const TOUCH_INTERVAL_MS = 60_000;

export function createAuthenticator(store: Store, now: () => number = Date.now) {
  const lastTouched = new Map<string, number>();

  return async function authenticate(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const header = request.headers.authorization;
    if (!header) {
      throw new ApiError(
        'missing_api_key',
        'Send your API key in the Authorization header as "Bearer <API_KEY>".',
      );
    }
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match?.[1]) {
      throw new ApiError(
        'missing_api_key',
        'The Authorization header must have the form "Bearer <API_KEY>".',
      );
    }
    const key = await store.findActiveApiKey(hashApiKey(match[1]));
    if (!key) throw new ApiError('invalid_api_key', 'The API key is unknown or has been revoked.');
    request.principal = { accountId: key.accountId, environment: key.environment, keyId: key.id };

    const at = now();
    if (at - (lastTouched.get(key.id) ?? 0) >= TOUCH_INTERVAL_MS) {
      lastTouched.set(key.id, at);
      await store.touchApiKey(key.id, at);
    }
  };
}

export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error('route is missing the authenticate hook');
  return request.principal;
}

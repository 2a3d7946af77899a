/**
 * Who a request acts for. A Bearer API key resolves to its account and environment
 * (docs/decisions.md#keys-and-environments); without an Authorization header, the dashboard's session cookie
 * resolves to its account and the environment the dashboard is looking at, and a state-changing request must
 * carry the session's CSRF token as well.
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiKeyAuthentication } from '../accounts/api-key-authentication.js';
import type { DashboardSessions } from '../accounts/dashboard-sessions.js';
import { ApiError } from '../domain/errors.js';
import type { TaskScope } from '../domain/task.js';
import type { DashboardSession } from '../ports/store.js';
import { CSRF_HEADER, isStateChanging, sessionToken } from './session-cookie.js';

export interface Principal extends TaskScope {
  /** The API key used; absent for a dashboard session. */
  readonly keyId?: string;
  readonly session?: DashboardSession;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
}

function sameToken(sent: string, expected: string): boolean {
  const a = Buffer.from(sent);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The dashboard session of a request with the session cookie, CSRF-checked when the request changes state;
 * `not_signed_in` without a live session.
 */
export async function sessionOf(
  request: FastifyRequest,
  sessions: DashboardSessions,
): Promise<DashboardSession> {
  const token = sessionToken(request);
  const session = token ? await sessions.find(token) : undefined;
  if (!session) throw new ApiError('not_signed_in', 'Sign in to the dashboard first.');
  if (isStateChanging(request)) {
    const sent = request.headers[CSRF_HEADER];
    if (typeof sent !== 'string' || !sameToken(sent, session.csrfToken)) {
      throw new ApiError(
        'invalid_csrf_token',
        'This request needs the X-CSRF-Token header of the signed-in dashboard session.',
      );
    }
  }
  return session;
}

export function createAuthenticator(keys: ApiKeyAuthentication, sessions?: DashboardSessions) {
  const requireSession = sessions && createSessionGuard(sessions);

  return async function authenticate(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const header = request.headers.authorization;
    if (!header && requireSession && sessionToken(request)) return requireSession(request);
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
    const key = await keys.keyFor(match[1], (error, keyId) => {
      request.log.warn({ err: error, key_id: keyId }, "recording the API key's last use failed");
    });
    if (!key) throw new ApiError('invalid_api_key', 'The API key is unknown or has been revoked.');
    request.principal = { accountId: key.accountId, environment: key.environment, keyId: key.id };
  };
}

/**
 * The hook of the dashboard's own routes: the session cookie only. It runs before body validation, so that a
 * request without a session is told to sign in rather than how its body is wrong.
 */
export function createSessionGuard(sessions: DashboardSessions) {
  return async function requireSession(request: FastifyRequest): Promise<void> {
    const session = await sessionOf(request, sessions);
    request.principal = { accountId: session.accountId, environment: session.environment, session };
  };
}

/** The session of a request that passed `createSessionGuard`'s hook. */
export function signedInSession(request: FastifyRequest): DashboardSession {
  const session = request.principal?.session;
  if (!session) throw new Error('route is missing the session guard');
  return session;
}

export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error('route is missing the authenticate hook');
  return request.principal;
}

/** What the rate limit counts requests by: the API key, or the dashboard session. */
export function rateLimitSubject(principal: Principal): string {
  return principal.keyId ?? `session:${principal.session?.tokenHash.slice(0, 24) ?? principal.accountId}`;
}

/**
 * The dashboard's session cookie: HttpOnly (page scripts never see the token), SameSite=Strict (other sites'
 * pages cannot send it), Secure when the service is reached over https. The CSRF token travels separately, in
 * the `X-CSRF-Token` header, and must match the session's.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SESSION_TTL_MS } from '../accounts/dashboard-sessions.js';

export const SESSION_COOKIE = 'videogen_session';
export const CSRF_HEADER = 'x-csrf-token';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Whether a request of `method` must carry the session's CSRF token when it comes with the session cookie. */
export function changesState(method: string): boolean {
  return !SAFE_METHODS.has(method.toUpperCase());
}

export function isStateChanging(request: FastifyRequest): boolean {
  return changesState(request.method);
}

export function sessionToken(request: FastifyRequest): string | undefined {
  return request.cookies[SESSION_COOKIE] || undefined;
}

function cookieOptions(request: FastifyRequest, secure: boolean) {
  return {
    httpOnly: true,
    sameSite: 'strict',
    path: '/',
    secure: secure || request.protocol === 'https',
  } as const;
}

export function setSessionCookie(reply: FastifyReply, token: string, secure: boolean): void {
  reply.setCookie(SESSION_COOKIE, token, {
    ...cookieOptions(reply.request, secure),
    maxAge: Math.floor(SESSION_TTL_MS / 1000),
  });
}

export function clearSessionCookie(reply: FastifyReply, secure: boolean): void {
  reply.clearCookie(SESSION_COOKIE, cookieOptions(reply.request, secure));
}

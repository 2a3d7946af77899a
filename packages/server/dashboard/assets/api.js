/**
 * Every request the dashboard makes: same-origin fetch with the session cookie, the CSRF token on
 * state-changing requests, and the API's error envelope turned into an `ApiError`.
 */

let csrfToken = null;
let onSignedOut = () => {};
let onSessionRenewed = () => true;

export function setCsrfToken(token) {
  csrfToken = token;
}

/** Called when the server says the session is gone (expired, or signed out in another tab). */
export function setSignedOutHandler(handler) {
  onSignedOut = handler;
}

/**
 * Called with the session read again after a refused CSRF token; answers whether the refused request may be sent
 * again with its token, i.e. whether it is still the account and environment the page shows.
 */
export function setSessionRenewedHandler(handler) {
  onSessionRenewed = handler;
}

export class ApiError extends Error {
  constructor(status, envelope, headers = new Headers()) {
    const error = envelope?.error ?? {};
    super(error.message ?? `The server answered HTTP ${status}.`);
    this.name = 'ApiError';
    this.status = status;
    this.code = error.code ?? 'http_error';
    this.param = error.param;
    this.requestId = error.request_id;
    const retryAfter = Number(headers.get('retry-after'));
    this.retryAfter = Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined;
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD']);

async function send(path, { method, json, form, signal, headers }) {
  const sent = new Headers(headers);
  if (json !== undefined) sent.set('content-type', 'application/json');
  if (!SAFE_METHODS.has(method) && csrfToken) sent.set('x-csrf-token', csrfToken);
  return fetch(path, {
    method,
    headers: sent,
    body: json !== undefined ? JSON.stringify(json) : form,
    signal,
    credentials: 'same-origin',
  });
}

async function readBody(response) {
  const text = await response.text();
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/**
 * `api('/v1/tasks', { signal })`, `api('/dashboard/api/keys', { method: 'POST', json: {...} })`,
 * `api('/v1/files', { method: 'POST', form: formData })`. Resolves to the parsed JSON body (null for 204).
 */
export async function api(path, options = {}) {
  const request = { method: 'GET', ...options };
  let response = await send(path, request);
  let body = await readBody(response);
  if (response.status === 403 && body?.error?.code === 'invalid_csrf_token' && request.method !== 'GET') {
    // The session was renewed elsewhere (a sign-in in another tab): fetch its token and try once more.
    const session = await send('/dashboard/api/session', { method: 'GET' });
    const renewed = session.ok ? await readBody(session) : null;
    if (renewed && !onSessionRenewed(renewed)) {
      // Another account, or another environment: what the reader confirmed was meant for the old one.
      throw new ApiError(409, {
        error: {
          code: 'session_changed',
          message:
            'You signed in again in another tab, so this page was out of date. Nothing was changed: check the page and try again.',
        },
      });
    }
    if (renewed) {
      setCsrfToken(renewed.csrf_token);
      response = await send(path, request);
      body = await readBody(response);
    }
  }
  if (!response.ok) {
    const error = new ApiError(response.status, body, response.headers);
    if (error.code === 'not_signed_in') onSignedOut();
    throw error;
  }
  return body;
}

/** A human sentence for an error of any kind. */
export function describeError(error) {
  if (error instanceof ApiError) return error.message;
  if (error?.name === 'TypeError')
    return 'The server could not be reached. Check your connection and try again.';
  return error?.message ?? String(error);
}

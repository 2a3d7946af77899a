// @ts-check
/**
 * Every request the dashboard makes: same-origin fetch with the session cookie, the CSRF token on
 * state-changing requests, and the API's error envelope turned into an `ApiError`.
 */

/** @type {string | null} */
let csrfToken = null;
/** @type {() => void} */
let onSignedOut = () => {};
/** @type {(renewed: SessionBody) => boolean} */
let onSessionRenewed = () => true;

/**
 * @typedef {object} ApiOptions
 * @property {string} [method] `GET` unless given.
 * @property {unknown} [json] A body sent as JSON.
 * @property {FormData} [form] A body sent as `multipart/form-data`.
 * @property {AbortSignal} [signal]
 * @property {HeadersInit} [headers]
 */

/**
 * The error body of every refusal (docs/api.md#errors).
 * @typedef {{ error?: { code?: string, message?: string, param?: string, request_id?: string } }} ErrorEnvelope
 */

/** @param {string | null} token */
export function setCsrfToken(token) {
  csrfToken = token;
}

/** Called when the server says the session is gone (expired, or signed out in another tab). */
/** @param {() => void} handler */
export function setSignedOutHandler(handler) {
  onSignedOut = handler;
}

/**
 * Called with the session read again after a refused CSRF token; answers whether the refused request may be sent
 * again with its token, i.e. whether it is still the account and environment the page shows.
 */
/** @param {(renewed: SessionBody) => boolean} handler */
export function setSessionRenewedHandler(handler) {
  onSessionRenewed = handler;
}

export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {ErrorEnvelope | null} envelope
   * @param {Headers} [headers]
   */
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

/**
 * @param {string} path
 * @param {ApiOptions & { method: string }} request
 */
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

/**
 * @param {Response} response
 * @returns {Promise<unknown>}
 */
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
/**
 * @template T
 * @param {string} path
 * @param {ApiOptions} [options]
 * @returns {Promise<T>}
 */
export async function api(path, options = {}) {
  const request = { method: 'GET', ...options };
  let response = await send(path, request);
  let body = await readBody(response);
  if (
    response.status === 403 &&
    envelopeOf(body)?.error?.code === 'invalid_csrf_token' &&
    request.method !== 'GET'
  ) {
    // The session was renewed elsewhere (a sign-in in another tab): fetch its token and try once more.
    const session = await send('/dashboard/api/session', { method: 'GET' });
    const renewed = /** @type {SessionBody | null} */ (session.ok ? await readBody(session) : null);
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
    const error = new ApiError(response.status, envelopeOf(body), response.headers);
    if (error.code === 'not_signed_in') onSignedOut();
    throw error;
  }
  return /** @type {T} */ (body);
}

/**
 * A body read as the error envelope it may be.
 * @param {unknown} body
 * @returns {ErrorEnvelope | null}
 */
function envelopeOf(body) {
  return typeof body === 'object' ? /** @type {ErrorEnvelope | null} */ (body) : null;
}

/** A human sentence for an error of any kind. */
/** @param {unknown} error */
export function describeError(error) {
  if (error instanceof ApiError) return error.message;
  if (error instanceof TypeError)
    return 'The server could not be reached. Check your connection and try again.';
  const message =
    typeof error === 'object' && error !== null && 'message' in error ? error.message : undefined;
  return typeof message === 'string' ? message : String(error);
}

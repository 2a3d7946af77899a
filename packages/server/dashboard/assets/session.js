// @ts-check
/** Who is signed in and which environment the dashboard looks at; the CSRF token goes to api.js. */
import { api, setCsrfToken, setSessionRenewedHandler } from './api.js';

/** @type {Set<(session: Session | null) => void>} */
const listeners = new Set();
/** @type {Session | null} */
let current = null;

/** `{ account: { id, email }, environment }`, or null when signed out. */
export function currentSession() {
  return current;
}

/** @param {(session: Session | null) => void} listener */
export function onSessionChange(listener) {
  listeners.add(listener);
}

/** @param {SessionBody | null} body */
function update(body) {
  current = body ? { account: body.account, environment: body.environment } : null;
  setCsrfToken(body?.csrf_token ?? null);
  for (const listener of listeners) listener(current);
  return current;
}

// A sign-in in another tab replaced the session: go on only if it is the same account and environment as shown.
setSessionRenewedHandler((body) => {
  const same = current?.account.id === body.account?.id && current?.environment === body.environment;
  update(body);
  return same;
});

export async function loadSession() {
  // Answers 200 signed in or not: a 401 here would be an error in the console of every signed-out visitor.
  /** @type {(SessionBody & { signed_in: true }) | { signed_in: false }} */
  const status = await api('/dashboard/api/session/status');
  return update(status?.signed_in ? status : null);
}

/**
 * @param {string} email
 * @param {string} password
 */
export async function signIn(email, password) {
  /** @type {SessionBody} */
  const body = await api('/dashboard/api/sign-in', { method: 'POST', json: { email, password } });
  return /** @type {Session} */ (update(body));
}

export async function signOut() {
  try {
    await api('/dashboard/api/sign-out', { method: 'POST' });
  } finally {
    update(null);
  }
}

/** Forget the session locally, when the server said it is gone. */
export function forgetSession() {
  if (current) update(null);
}

/** @param {string} environment */
export async function setEnvironment(environment) {
  /** @type {SessionBody} */
  const body = await api('/dashboard/api/session/environment', { method: 'PUT', json: { environment } });
  return /** @type {Session} */ (update(body));
}

/** Who is signed in and which environment the dashboard looks at; the CSRF token goes to api.js. */
import { api, setCsrfToken, setSessionRenewedHandler } from './api.js';

const listeners = new Set();
let current = null;

/** `{ account: { id, email }, environment }`, or null when signed out. */
export function currentSession() {
  return current;
}

export function onSessionChange(listener) {
  listeners.add(listener);
}

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
  const status = await api('/dashboard/api/session/status');
  return update(status?.signed_in ? status : null);
}

export async function signIn(email, password) {
  return update(await api('/dashboard/api/sign-in', { method: 'POST', json: { email, password } }));
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

export async function setEnvironment(environment) {
  return update(await api('/dashboard/api/session/environment', { method: 'PUT', json: { environment } }));
}

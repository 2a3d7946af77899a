// @ts-check
/** #/sign-in: email and password; the session cookie is set by the server and never seen by scripts. */
import { ApiError } from './api.js';
import { field, h } from './dom.js';
import { signIn } from './session.js';
import { errorBox, pageHeading } from './ui.js';

/** @param {number} seconds */
function waitText(seconds) {
  const minutes = Math.ceil(seconds / 60);
  return seconds < 90 ? `${seconds} seconds` : `${minutes} minutes`;
}

/**
 * @param {HTMLElement} main
 * @param {RouteContext & { onSignedIn: () => void }} context
 */
export function renderSignIn(main, { onSignedIn }) {
  const email = h('input', { type: 'email', name: 'email', autocomplete: 'username', required: true });
  const password = h('input', {
    type: 'password',
    name: 'password',
    autocomplete: 'current-password',
    required: true,
  });
  const errors = errorBox();
  const submit = h('button', { type: 'submit', class: 'button' }, 'Sign in');

  const form = h(
    'form',
    { class: 'card narrow' },
    errors,
    field('Email', email),
    field('Password', password),
    h('div', { class: 'actions' }, submit),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    errors.clear();
    submit.disabled = true;
    try {
      await signIn(email.value, password.value);
      onSignedIn();
    } catch (error) {
      if (error instanceof ApiError && error.code === 'rate_limited') {
        const wait = error.retryAfter ? ` Try again in ${waitText(error.retryAfter)}.` : '';
        // `param` is `email` for a lockout of the email; without it, this address made too many attempts.
        const what =
          error.param === 'email'
            ? 'Too many failed sign-ins for this email.'
            : 'Too many sign-in attempts from this network.';
        errors.show(`${what}${wait}`);
      } else if (error instanceof ApiError && error.code === 'invalid_credentials') {
        errors.show('That email and password do not match an account.');
        password.select();
      } else {
        errors.show(error);
      }
      password.focus();
    } finally {
      submit.disabled = false;
    }
  });

  main.replaceChildren(
    h(
      'section',
      { class: 'sign-in' },
      pageHeading('Sign in', 'Manage your API keys, follow your tasks and try the models.'),
      form,
      h(
        'p',
        { class: 'hint' },
        'No account yet? Whoever runs this server makes one with ',
        h('code', {}, 'videogen accounts create --email you@example.com'),
        '.',
      ),
    ),
  );
  email.focus();
}

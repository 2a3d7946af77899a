// @ts-check
/** Boot: find the session, wire the header (nav, environment, sign-out) and route between pages. */
import { describeError, setSignedOutHandler } from './api.js';
import { announce, byId, h } from './dom.js';
import { renderKeys } from './keys-page.js';
import { renderPlayground } from './playground-page.js';
import { createRouter, navigate } from './router.js';
import {
  currentSession,
  forgetSession,
  loadSession,
  onSessionChange,
  setEnvironment,
  signOut,
} from './session.js';
import { renderSignIn } from './sign-in-page.js';
import { renderTask } from './task-page.js';
import { renderTasks } from './tasks-page.js';
import { pageHeading } from './ui.js';
import { renderUsage } from './usage-page.js';
import { renderWebhooks } from './webhooks-page.js';

const main = byId('main', HTMLElement);
const nav = byId('site-nav', HTMLElement);
const sessionBar = byId('session-bar', HTMLDivElement);
const environmentSelect = byId('environment-select', HTMLSelectElement);
const accountEmail = byId('account-email', HTMLSpanElement);
const productionBanner = byId('production-banner', HTMLDivElement);

const HOME = '#/keys';
/** Where a signed-out reader was going, to take them there after signing in. */
let afterSignIn = HOME;

/** @type {import('./router.js').Route[]} */
const routes = [
  {
    pattern: /^\/sign-in$/,
    title: 'Sign in',
    public: true,
    render: (context) => renderSignIn(main, { ...context, onSignedIn }),
  },
  { pattern: /^\/keys$/, title: 'API keys', nav: '#/keys', render: (context) => renderKeys(main, context) },
  { pattern: /^\/tasks$/, title: 'Tasks', nav: '#/tasks', render: (context) => renderTasks(main, context) },
  {
    pattern: /^\/tasks\/([^/]+)$/,
    title: 'Task',
    nav: '#/tasks',
    render: (context) => renderTask(main, context),
  },
  {
    pattern: /^\/playground$/,
    title: 'Playground',
    nav: '#/playground',
    render: (context) => renderPlayground(main, context),
  },
  { pattern: /^\/usage$/, title: 'Usage', nav: '#/usage', render: (context) => renderUsage(main, context) },
  {
    pattern: /^\/webhooks$/,
    title: 'Webhooks',
    nav: '#/webhooks',
    render: (context) => renderWebhooks(main, context),
  },
];

function onSignedIn() {
  const target = afterSignIn;
  afterSignIn = HOME;
  navigate(target);
}

/** @param {string | undefined} hash */
function markCurrentNav(hash) {
  for (const link of nav.querySelectorAll('a')) {
    if (link.getAttribute('href') === hash) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
}

const router = createRouter({
  routes,
  async resolve(route, context) {
    const signedIn = currentSession() !== null;
    if (route && !route.public && !signedIn) {
      afterSignIn = location.hash;
      navigate('#/sign-in');
      return;
    }
    if (route?.public && signedIn) {
      navigate(HOME);
      return;
    }
    document.title = `${route?.title ?? 'Not found'} · videogen`;
    markCurrentNav(route?.nav);
    if (!route) {
      main.replaceChildren(
        ...pageHeading('Page not found'),
        h('p', {}, 'There is no such page. ', h('a', { href: HOME }, 'Go to your API keys'), '.'),
      );
      main.querySelector('h1')?.focus();
      return;
    }
    // Pages put their heading in place before their first await: focus it now, not once their data is in.
    const rendering = route.render(context);
    if (!main.contains(document.activeElement)) main.querySelector('h1')?.focus();
    try {
      await rendering;
    } catch (error) {
      if (context.signal.aborted) return;
      main.replaceChildren(
        ...pageHeading('Something went wrong'),
        h('p', { role: 'alert' }, describeError(error)),
      );
      main.querySelector('h1')?.focus();
    }
  },
});

onSessionChange((session) => {
  nav.hidden = !session;
  sessionBar.hidden = !session;
  productionBanner.hidden = session?.environment !== 'production';
  document.body.classList.toggle('production', session?.environment === 'production');
  if (session) {
    accountEmail.textContent = session.account.email;
    environmentSelect.value = session.environment;
  }
});

setSignedOutHandler(() => {
  if (!currentSession()) return;
  forgetSession();
  afterSignIn = location.hash.startsWith('#/') ? location.hash : HOME;
  announce('Your session ended. Sign in again.');
  navigate('#/sign-in');
});

environmentSelect.addEventListener('change', async () => {
  try {
    const session = await setEnvironment(environmentSelect.value);
    announce(`Now looking at ${session.environment}.`);
    router.show();
    // The page is redrawn, but changing a select must not move the focus away from it (WCAG 3.2.2).
    environmentSelect.focus();
  } catch (error) {
    environmentSelect.value = currentSession()?.environment ?? 'development';
    announce(describeError(error));
  }
});

byId('sign-out', HTMLButtonElement).addEventListener('click', async () => {
  try {
    await signOut();
  } catch (error) {
    // Signed out here all the same; say that the server may still hold the session.
    announce(`Signing out may not have reached the server: ${describeError(error)}`);
  } finally {
    afterSignIn = HOME;
    navigate('#/sign-in');
  }
});

byId('skip-link', HTMLAnchorElement).addEventListener('click', (event) => {
  event.preventDefault();
  main.focus();
});

async function start() {
  try {
    await loadSession();
  } catch (error) {
    main.replaceChildren(
      ...pageHeading('The server could not be reached'),
      h('p', { role: 'alert' }, describeError(error)),
    );
    return;
  }
  if (!location.hash.startsWith('#/')) history.replaceState(null, '', currentSession() ? HOME : '#/sign-in');
  router.show();
}

start();

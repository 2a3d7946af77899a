// @ts-check
/**
 * Hash routes (`#/tasks/<id>?status=failed`). Each page renders into `<main>` and gets an AbortSignal that fires
 * when the reader leaves it, which closes its event streams, timers and pending requests.
 */

/** @param {string} hash */
function parseHash(hash) {
  const [path, query = ''] = hash.replace(/^#/, '').split('?');
  return { path: path || '/', query: new URLSearchParams(query) };
}

/** The route's parameters decoded, or null when one is not valid percent-encoding (`#/tasks/%E0`). */
/** @param {string[]} raw */
function decodeParams(raw) {
  try {
    return raw.map(decodeURIComponent);
  } catch {
    return null;
  }
}

/**
 * @typedef {{ pattern: RegExp, title: string, nav?: string, public?: boolean, render: (context: RouteContext) => Promise<void> | void }} Route
 */

/**
 * @param {{ routes: Route[], resolve: (route: Route | null, context: RouteContext) => Promise<void> }} options
 */
export function createRouter({ routes, resolve }) {
  /** @type {AbortController | null} */
  let controller = null;

  async function show() {
    if (!location.hash.startsWith('#/')) return;
    const { path, query } = parseHash(location.hash);
    controller?.abort();
    controller = new AbortController();
    const signal = controller.signal;
    for (const route of routes) {
      const match = route.pattern.exec(path);
      const params = match && decodeParams(match.slice(1));
      if (params) {
        await resolve(route, { params, query, path, signal });
        return;
      }
    }
    await resolve(null, { params: [], query, path, signal });
  }

  window.addEventListener('hashchange', show);
  return { show };
}

/** @param {string} hash */
export function navigate(hash) {
  if (location.hash === hash) window.dispatchEvent(new HashChangeEvent('hashchange'));
  else location.hash = hash;
}

/**
 * Hash routes (`#/tasks/<id>?status=failed`). Each page renders into `<main>` and gets an AbortSignal that fires
 * when the reader leaves it, which closes its event streams, timers and pending requests.
 */

function parseHash(hash) {
  const [path, query = ''] = hash.replace(/^#/, '').split('?');
  return { path: path || '/', query: new URLSearchParams(query) };
}

/** The route's parameters decoded, or null when one is not valid percent-encoding (`#/tasks/%E0`). */
function decodeParams(raw) {
  try {
    return raw.map(decodeURIComponent);
  } catch {
    return null;
  }
}

export function createRouter({ routes, resolve }) {
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

export function navigate(hash) {
  if (location.hash === hash) window.dispatchEvent(new HashChangeEvent('hashchange'));
  else location.hash = hash;
}

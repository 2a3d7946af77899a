/** The routes a running server has, from Fastify's own listing, and which of them the OpenAPI document covers. */
import type { FastifyInstance } from 'fastify';

export interface ServerRoute {
  readonly method: string;
  readonly url: string;
}

/** The routes the server has, from Fastify's own listing (`printRoutes`, which every route appears in). */
export function serverRoutes(app: FastifyInstance): ServerRoute[] {
  const routes: ServerRoute[] = [];
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^([│ ]*)[├└]── (.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = (match[1] ?? '').length / 4;
    const url = (depth > 0 ? (stack[depth - 1] ?? '') : '') + match[2];
    stack.length = depth;
    stack[depth] = url;
    for (const method of match[3]?.split(', ') ?? []) routes.push({ method, url });
  }
  return routes;
}

/**
 * Routes for browsers, not API clients, which the document leaves out: the dashboard's page and the reference
 * page with their static files, the icon, and the document itself (the dashboard's /api routes are documented).
 */
export function isPage(url: string): boolean {
  return (
    url === '/' ||
    url === '/favicon.ico' ||
    url === '/openapi.json' ||
    url.startsWith('/docs') ||
    (url.startsWith('/dashboard') && !url.startsWith('/dashboard/api/'))
  );
}

/** `/v1/tasks/:task_id` as the document writes it, `/v1/tasks/{task_id}`. */
export const toOpenApiPath = (url: string): string => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/**
 * The server's API routes that the document lacks, as `METHOD /path`. Fastify answers HEAD for every GET route;
 * only a HEAD declared on its own needs documenting.
 */
export function undocumentedRoutes(
  app: FastifyInstance,
  paths: Readonly<Record<string, Readonly<Record<string, unknown>>>>,
): string[] {
  const routes = serverRoutes(app).filter((route) => !isPage(route.url));
  const byUrl = new Map<string, Set<string>>();
  for (const { method, url } of routes) byUrl.set(url, (byUrl.get(url) ?? new Set()).add(method));
  const missing: string[] = [];
  for (const [url, methods] of byUrl) {
    const item = paths[toOpenApiPath(url)];
    for (const method of methods) {
      if (method === 'HEAD' && methods.has('GET')) continue;
      if (!item?.[method.toLowerCase()]) missing.push(`${method} ${url}`);
    }
  }
  return missing;
}

/**
 * `GET /favicon.ico`, which browsers ask for on any page of this server (the `/docs` reference, the
 * dashboard, a JSON document opened in a tab): the dashboard's icon, dashboard/assets/favicon.svg drawn at 16, 32
 * and 48 px (PNG images in an ICO file, which every browser reads at this address).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';

const FAVICON_PATH = fileURLToPath(new URL('../../../../dashboard/assets/favicon.ico', import.meta.url));

export function faviconRoutes(app: FastifyInstance): void {
  const icon = readFileSync(FAVICON_PATH);
  const etag = `"${createHash('sha256').update(icon).digest('base64url').slice(0, 22)}"`;
  app.get('/favicon.ico', { schema: { hide: true } }, async (request, reply) => {
    // A day, then revalidated by its ETag: a new icon in a new release shows within a day.
    reply.header('cache-control', 'public, max-age=86400').header('etag', etag);
    if (request.headers['if-none-match'] === etag) return reply.code(304).send();
    return reply.type('image/x-icon').send(icon);
  });
}

/**
 * `GET /docs/`: the interactive API reference, Swagger UI (swagger-ui-dist) reading `GET /openapi.json`. The
 * page (packages/server/api-reference) and the viewer's script and styles are all served from this server: no
 * CDN, no validator badge (Swagger UI would send the document to validator.swagger.io), nothing inline but the
 * viewer's configuration as data. docs/api.md says why Swagger UI (it supports Node 20; Scalar's packages no
 * longer do).
 */
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { staticFileErrorHandler } from '../static-file-errors.js';

const DOCS_PREFIX = '/docs';

const PAGE_DIR = fileURLToPath(new URL('../../../../api-reference/', import.meta.url));
const VIEWER_DIR = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
/** The page, its own script and styles, and of swagger-ui-dist's files the ones the page loads. */
const SERVED_FILES = new Set([
  '/',
  '/index.html',
  '/reference.js',
  '/reference.css',
  '/swagger-ui-bundle.js',
  '/swagger-ui.css',
]);

// Swagger UI sets style attributes and draws its icons from data: URLs; everything else comes from here.
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "img-src 'self' data:",
  "style-src 'self' 'unsafe-inline'",
  "script-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

function secure(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', CONTENT_SECURITY_POLICY)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer');
}

export function apiReferenceRoutes(app: FastifyInstance): void {
  // The page's relative links need the trailing slash.
  app.get(DOCS_PREFIX, { schema: { hide: true } }, async (_request, reply) => reply.redirect('docs/', 302));
  app.register(async (scope) => {
    scope.setErrorHandler(staticFileErrorHandler);
    await scope.register(fastifyStatic, {
      // The page's folder first: swagger-ui-dist has an index.html of its own.
      root: [PAGE_DIR, VIEWER_DIR],
      prefix: `${DOCS_PREFIX}/`,
      allowedPath: (path) => SERVED_FILES.has(path),
      index: ['index.html'],
      serve: true,
      schemaHide: true,
      setHeaders: secure,
    });
  });
}

/**
 * The dashboard's page: one HTML document and its scripts and styles (packages/server/dashboard), all from
 * this server: no CDN. The page routes by URL fragment, so `/dashboard` is the only document. The content
 * security policy allows nothing inline and nothing from elsewhere but the result videos.
 */
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { staticFileErrorHandler } from '../static-file-errors.js';

const DASHBOARD_DIR = fileURLToPath(new URL('../../../../dashboard/', import.meta.url));
const ASSETS_DIR = fileURLToPath(new URL('../../../../dashboard/assets/', import.meta.url));

function contentSecurityPolicy(mediaSources: readonly string[]): string {
  return [
    "default-src 'self'",
    "img-src 'self' data: blob:",
    `media-src 'self' blob: ${mediaSources.join(' ')}`.trim(),
    "connect-src 'self'",
    "style-src 'self'",
    "script-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export function dashboardPageRoutes(
  app: FastifyInstance,
  deps: {
    /** Where result videos come from besides this server (an S3 endpoint's origin). */
    mediaSources: readonly string[];
  },
) {
  const policy = contentSecurityPolicy(deps.mediaSources);
  const secure = (reply: FastifyReply) =>
    reply
      .header('content-security-policy', policy)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('x-frame-options', 'DENY');

  // Its own context, so that the error handler for the files' refusals applies to the page and the files only.
  app.register(async (scope) => {
    scope.setErrorHandler(staticFileErrorHandler);
    await scope.register(fastifyStatic, {
      root: ASSETS_DIR,
      prefix: '/dashboard/assets/',
      index: false,
      serve: true,
      setHeaders: (reply) => {
        secure(reply);
      },
      schemaHide: true,
    });
    const page = async (_request: unknown, reply: FastifyReply) =>
      secure(reply).header('cache-control', 'no-cache').sendFile('index.html', DASHBOARD_DIR);
    scope.get('/dashboard', { schema: { hide: true } }, page);
    scope.get('/dashboard/', { schema: { hide: true } }, page);
  });
  app.get('/', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/dashboard', 302));
}

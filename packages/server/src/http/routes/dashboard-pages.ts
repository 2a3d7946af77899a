/**
 * The dashboard's page: one HTML document and its scripts and styles (packages/server/dashboard), all from
 * this server: no CDN. The page routes by URL fragment, so `/dashboard` is the only document. The content
 * security policy allows nothing inline and nothing from elsewhere but the result videos.
 */
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../domain/errors.js';
import { errorHandler, notFoundHandler, sendError } from '../error-handler.js';

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

/**
 * What @fastify/static refuses, in the error shape: a path that names none of the files it serves (a directory,
 * `..`, a NUL byte, any non-canonical spelling) is a 404 like a missing file, an unsatisfiable `Range` a 416, a
 * conditional GET that does not hold a 412. Its errors carry only a status (and a `Content-Range` for the 416),
 * which the shared handler would otherwise answer as a 500. Anything else, a failed read, stays a 500.
 */
function staticFileErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  switch (error.statusCode) {
    case 400:
    case 403:
    case 404:
      return notFoundHandler(request, reply);
    case 412:
      return sendError(
        reply,
        new ApiError('precondition_failed', 'The file does not match If-Match or If-Unmodified-Since.'),
      );
    case 416: {
      const range = (error as FastifyError & { headers?: Record<string, string> }).headers?.['Content-Range'];
      return sendError(
        reply,
        new ApiError('range_not_satisfiable', 'The Range does not overlap the file.', {
          headers: range ? { 'content-range': range } : {},
        }),
      );
    }
    default:
      return errorHandler(error, request, reply);
  }
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

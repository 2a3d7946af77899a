/**
 * Request bodies: JSON, on the routes that take one. A route that takes none (cancel, delete, redeliver)
 * treats an empty body as no body whatever its declared type, since clients send one with the creation
 * example's `Content-Type: application/json` copied onto the call, or with `curl -d ''` (form-encoded). Any
 * other type is `415 unsupported_media_type`, refused before the body is read. A route takes a body when its
 * schema declares one; multipart uploads have their own parser (routes/files.ts).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { unsupportedMediaType } from './error-handler.js';

function takesBody(request: FastifyRequest): boolean {
  return request.routeOptions.schema?.body !== undefined;
}

export function registerBodyParsers(app: FastifyInstance, options: { bodyLimit: number }): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  // Fastify's text/plain parser would hand a route a string where it expects JSON.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser<string>(
    'application/json',
    // A route's own limit (task creation's) overrides this one.
    { parseAs: 'string', bodyLimit: options.bodyLimit },
    (request, body, done) => {
      if (body.length === 0 && !takesBody(request)) {
        done(null, undefined);
        return;
      }
      parseJson(request, body, done);
    },
  );
  app.addContentTypeParser('*', (request, payload, done) => {
    if (takesBody(request)) {
      done(unsupportedMediaType(request), undefined);
      return;
    }
    let settled = false;
    const settle = (error: Error | null) => {
      if (settled) return;
      settled = true;
      done(error, undefined);
    };
    // Data that follows a refusal is drained by Node once the answer ends.
    payload.on('data', () => settle(unsupportedMediaType(request)));
    payload.on('end', () => settle(null));
    payload.on('error', (error) => settle(error));
  });
}

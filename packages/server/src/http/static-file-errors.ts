import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../domain/errors.js';
import { errorHandler, notFoundHandler, sendError } from './error-handler.js';

/**
 * What @fastify/static refuses, in the error shape: a path that names none of the files it serves (a directory,
 * `..`, a NUL byte, any non-canonical spelling) is a 404 like a missing file, an unsatisfiable `Range` a 416, a
 * conditional GET that does not hold a 412. Its errors carry only a status (and a `Content-Range` for the 416),
 * which the shared handler would otherwise answer as a 500. Anything else, a failed read, stays a 500.
 */
export function staticFileErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
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
      if (range) reply.header('content-range', range);
      return sendError(reply, new ApiError('range_not_satisfiable', 'The Range does not overlap the file.'));
    }
    default:
      return errorHandler(error, request, reply);
  }
}

/**
 * Every non-2xx answer has the body `{ error: { code, message, type, param?, request_id } }`
 * (docs/decisions.md#errors): an `ApiError` becomes its code's status and type (error-statuses.ts), and
 * `Retry-After` when it says when to come back.
 */
import { type IncomingMessage, maxHeaderSize, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { finished } from 'node:stream';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { ApiError, type ApiErrorCode, type ConnectionErrorCode } from '../domain/errors.js';
import { resourceShortageOf } from '../ports/resource-shortage.js';
import { ERROR_STATUSES } from './error-statuses.js';
import { type OpenAiErrorType, openAiErrorType } from './openai-error-type.js';

export interface ErrorBody {
  error: { code: ApiErrorCode; message: string; type: string; param?: string; request_id: string };
}

/** The body of an answer the server gives before routing (domain/errors.ts `CONNECTION_ERRORS`): the same shape. */
export interface ConnectionErrorBody {
  error: { code: ConnectionErrorCode; message: string; type: string; request_id: string };
}

function connectionErrorBody(
  code: ConnectionErrorCode,
  message: string,
  requestId: string,
): ConnectionErrorBody {
  return { error: { code, message, type: ERROR_STATUSES[code].type, request_id: requestId } };
}

const FRAMEWORK_ERRORS: Record<string, ApiErrorCode> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid_json',
  FST_ERR_VALIDATION: 'invalid_parameter',
};

/**
 * A route that reads a body got none: the same answer whether the client sent no body at all or an empty one
 * with `Content-Type: application/json` (Fastify refuses the second as invalid JSON and leaves the first to the
 * route's schema, which would say `body must be object`).
 */
export function emptyBody(): ApiError {
  return new ApiError(
    'invalid_json',
    'The request body is empty: send a JSON object with Content-Type: application/json.',
  );
}

/** A body of a type the route does not read. */
export function unsupportedMediaType(request: FastifyRequest): ApiError {
  const consumes = request.routeOptions.schema?.consumes;
  const forms = Array.isArray(consumes) && consumes.includes('multipart/form-data');
  if (forms && consumes.includes('application/json')) {
    return new ApiError(
      'unsupported_media_type',
      'Send the request body as JSON (Content-Type: application/json) or as multipart/form-data.',
    );
  }
  return forms
    ? new ApiError('unsupported_media_type', 'Send the file as multipart/form-data.', { param: 'file' })
    : new ApiError(
        'unsupported_media_type',
        'Send the request body as JSON with Content-Type: application/json.',
      );
}

/** `20 MB`, `64 KB`: body limits as the docs and settings give them. */
function describeBytes(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KB`;
  return `${bytes} bytes`;
}

function toApiError(error: FastifyError, request: FastifyRequest): ApiError | undefined {
  if (
    error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ||
    (error.validationContext === 'body' && request.body === undefined)
  ) {
    return emptyBody();
  }
  if (error instanceof ApiError) return error;
  const code = error.code ? FRAMEWORK_ERRORS[error.code] : undefined;
  if (code === 'unsupported_media_type') return unsupportedMediaType(request);
  if (code === 'payload_too_large') {
    const limit = request.routeOptions.bodyLimit;
    return new ApiError(
      code,
      limit
        ? `The request body is larger than this endpoint accepts (${describeBytes(limit)}).`
        : 'The request body is too large.',
    );
  }
  if (code === 'invalid_json' || (error instanceof SyntaxError && error.statusCode === 400)) {
    return new ApiError('invalid_json', 'The request body is not valid JSON.');
  }
  if (code) return new ApiError(code, error.message);
  return undefined;
}

/** The body of an error in OpenAI's envelope (the OpenAI Videos API routes). */
export interface OpenAiErrorBody {
  error: { message: string; type: OpenAiErrorType; param: string | null; code: ApiErrorCode };
}

/**
 * Answers the error in the envelope of the route the request reached: OpenAI's on the OpenAI Videos API routes
 * (`config.errorEnvelope`), the service's own elsewhere.
 */
export function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
  const { status, type } = ERROR_STATUSES[error.code];
  reply.code(status);
  if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
  if (reply.request.routeOptions.config?.errorEnvelope === 'openai') {
    const body: OpenAiErrorBody = {
      error: {
        message: error.message,
        type: openAiErrorType(status),
        param: error.param ?? null,
        code: error.code,
      },
    };
    return reply.type('application/json; charset=utf-8').send(body);
  }
  const body: ErrorBody = {
    error: {
      code: error.code,
      message: error.message,
      type,
      ...(error.param === undefined ? {} : { param: error.param }),
      request_id: String(reply.request.id),
    },
  };
  return reply.type('application/json; charset=utf-8').send(body);
}

/** A `CONNECTION_ERRORS` answer to a request Fastify has read: one no route may see. */
export function sendConnectionError(
  reply: FastifyReply,
  code: ConnectionErrorCode,
  message: string,
): FastifyReply {
  // Serialized here, past the route's response schema: on a route whose errors are in OpenAI's envelope, the
  // schema of this status is either body, and the serializer would take this one for OpenAI's.
  return reply
    .code(ERROR_STATUSES[code].status)
    .type('application/json; charset=utf-8')
    .send(JSON.stringify(connectionErrorBody(code, message, String(reply.request.id))));
}

/** Seconds a client is asked to wait after a write failed for lack of space: as long as readiness is withheld. */
const NO_SPACE_RETRY_SECONDS = 30;
/** After the database stayed busy past its wait: another process's writes, which take milliseconds each. */
const BUSY_RETRY_SECONDS = 1;

/**
 * Fastify's error handler. A store or storage out of a resource for now (ports/resource-shortage.ts) is a `503`
 * the client may retry, its cause named in the log: `storage_full` for lack of space (`onNoSpace` is told, for
 * readiness), `overloaded` for a database busy with other writers.
 */
export function createErrorHandler(options: { onNoSpace?: () => void } = {}) {
  return function errorHandler(
    error: FastifyError,
    request: FastifyRequest,
    reply: FastifyReply,
  ): FastifyReply {
    const known = toApiError(error, request);
    if (known) return sendError(reply, known);
    if (error.code === 'ECONNRESET' && request.raw.socket.destroyed) {
      // The body stopped arriving because the connection closed (the client left, or a timeout ended it):
      // nothing failed here, and the answer reaches nobody.
      request.log.info({ reason: error.message }, 'connection closed while the request was read');
      return sendError(reply, new ApiError('invalid_json', 'The request body did not arrive.'));
    }
    const shortage = resourceShortageOf(error);
    if (shortage?.kind === 'no_space') {
      request.log.error({ err: error, code: shortage.code }, `no space left to write (${shortage.code})`);
      options.onNoSpace?.();
      return sendError(
        reply,
        new ApiError(
          'storage_full',
          `The server has no space left to store this request; retry after ${NO_SPACE_RETRY_SECONDS} s.`,
          { retryAfterSeconds: NO_SPACE_RETRY_SECONDS },
        ),
      );
    }
    if (shortage?.kind === 'busy') {
      request.log.warn({ err: error, code: shortage.code }, `the database is busy (${shortage.code})`);
      return sendError(
        reply,
        new ApiError(
          'overloaded',
          `The database is busy with other writes; retry after ${BUSY_RETRY_SECONDS} s.`,
          { retryAfterSeconds: BUSY_RETRY_SECONDS },
        ),
      );
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendError(reply, new ApiError('internal_error', 'The server failed to handle this request.'));
  };
}

/** The error handler without readiness: for a scope's own handler that falls back to it. */
export const errorHandler = createErrorHandler();

export function notFoundHandler(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return sendError(
    reply,
    new ApiError('not_found', `No route for ${request.method} ${request.url.split('?')[0]}.`),
  );
}

/**
 * Fastify's `frameworkErrors`: a path that is not valid percent-encoding (`/v1/tasks/%zz`), found before any
 * route or hook runs, so the request id header is set here.
 */
export function frameworkErrorHandler(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  reply.header('x-request-id', request.id);
  const path = request.url.split('?')[0] ?? '';
  if (error.code === 'FST_ERR_BAD_URL') {
    request.log.info({ method: request.method, status: 400 }, 'request with a malformed path');
    void sendConnectionError(
      reply,
      'malformed_request',
      'The request path is not valid percent-encoded UTF-8.',
    );
    return;
  }
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    void sendError(reply, new ApiError('not_found', `No route for ${request.method} ${path.slice(0, 200)}.`));
    return;
  }
  request.log.error({ err: error }, 'unhandled framework error');
  void sendError(reply, new ApiError('internal_error', 'The server failed to handle this request.'));
}

const CLIENT_ERRORS: Record<string, { code: ConnectionErrorCode; message: string }> = {
  ERR_HTTP_REQUEST_TIMEOUT: {
    code: 'request_timeout',
    message: 'The request did not arrive in time: send its headers and body without pausing.',
  },
  HPE_HEADER_OVERFLOW: {
    code: 'headers_too_large',
    message: `The request line and headers are larger than this server accepts (${maxHeaderSize / 1024} KB).`,
  },
};

/**
 * The HTTP server's `clientError`: a request Node's parser refused or that did not arrive in time. There is
 * no request or reply object, so the answer, in the error shape with a request id of its own, is written to
 * the socket, after the answers to the requests before it on the connection (a client may send several in one
 * go), unless it is an error in the body of a request whose answer has begun (writing then would corrupt it).
 */
export function createClientErrorHandler(deps: {
  log: Logger;
  newRequestId: () => string;
  /** The latest request on this connection that reached the routes, with its answer. */
  latest: (
    socket: Socket,
  ) => { readonly id: string; request: IncomingMessage; response: ServerResponse } | undefined;
}): (error: Error & { code?: string }, socket: Socket) => void {
  /** Connections refused already: Node's parser, once it failed, fails again on every later read. */
  const refused = new WeakSet<Socket>();
  return (error, socket) => {
    if (error.code === 'ECONNRESET' || socket.destroyed || refused.has(socket)) return;
    refused.add(socket);
    const known = error.code ? CLIENT_ERRORS[error.code] : undefined;
    const { code, message } = known ?? {
      code: 'malformed_request' as const,
      message: 'The request is not valid HTTP/1.1.',
    };
    const status = ERROR_STATUSES[code].status;
    const latest = deps.latest(socket);
    // The latest request's body not all read (arriving, or left unread after an early answer such as a 415): the
    // error is in it, and belongs to it. Otherwise it is in a request after it, not yet announced.
    const inBody = latest !== undefined && !latest.request.complete;
    const requestId = inBody ? latest.id : deps.newRequestId();
    deps.log.info({ request_id: requestId, status, reason: error.code ?? error.message }, 'request refused');
    if (!socket.writable || (inBody && latest.response.headersSent)) {
      socket.destroy();
      return;
    }
    const body = JSON.stringify(connectionErrorBody(code, message, requestId));
    const answer = () => {
      socket.end(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
          `content-type: application/json; charset=utf-8\r\n` +
          `content-length: ${Buffer.byteLength(body)}\r\n` +
          `x-request-id: ${requestId}\r\n` +
          'connection: close\r\n\r\n' +
          body,
      );
      // end() only half-closes; a client that never stops sending would hold the socket open.
      socket.once('finish', () => socket.destroy());
    };
    if (inBody || !latest || latest.response.writableFinished) {
      answer();
      return;
    }
    // Node writes the answers to a connection's requests in order, each once the one before it has ended: once the
    // latest has, all have. One that closed the connection leaves nothing to answer on.
    finished(latest.response, () => {
      if (socket.writable) answer();
    });
  };
}

/** Every non-2xx answer has the body `{ error: { code, message, type, param?, request_id } }` (decisions.md §3). */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { API_ERRORS, ApiError, type ApiErrorCode } from '../errors.js';

export interface ErrorBody {
  error: { code: ApiErrorCode; message: string; type: string; param?: string; request_id: string };
}

const FRAMEWORK_ERRORS: Record<string, ApiErrorCode> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid_json',
  FST_ERR_VALIDATION: 'invalid_parameter',
};

/** `20 MB`, `64 KB`: body limits as the docs and settings give them. */
function describeBytes(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KB`;
  return `${bytes} bytes`;
}

function toApiError(error: FastifyError, request: FastifyRequest): ApiError | undefined {
  if (error instanceof ApiError) return error;
  const code = error.code ? FRAMEWORK_ERRORS[error.code] : undefined;
  if (code === 'unsupported_media_type') {
    return new ApiError(code, 'Send the request body as JSON with Content-Type: application/json.');
  }
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

export function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
  const body: ErrorBody = {
    error: {
      code: error.code,
      message: error.message,
      type: API_ERRORS[error.code].type,
      ...(error.param === undefined ? {} : { param: error.param }),
      request_id: String(reply.request.id),
    },
  };
  return reply.code(error.status).headers(error.headers).type('application/json; charset=utf-8').send(body);
}

export function errorHandler(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  const known = toApiError(error, request);
  if (known) return sendError(reply, known);
  request.log.error({ err: error }, 'unhandled error');
  return sendError(reply, new ApiError('internal_error', 'The server failed to handle this request.'));
}

export function notFoundHandler(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return sendError(
    reply,
    new ApiError('not_found', `No route for ${request.method} ${request.url.split('?')[0]}.`),
  );
}

/**
 * Typed errors. Every error the client throws (except an abort, which rethrows the signal's reason) is a
 * `VideogenError` carrying `code`; the API's answers also carry `status`, `requestId` and `param`. The
 * subclass follows the HTTP status, so `instanceof NotFoundError` and `error.code === 'task_not_found'`
 * both work.
 */
import type { FailedTask, TaskErrorCode } from './types.js';

/**
 * The codes of the API's error catalogue (docs/api.md). `malformed_request`, `request_timeout` (408: the request
 * did not reach the server in time) and `headers_too_large` are answered before the request reaches a route.
 */
export type ApiErrorCode =
  | 'malformed_request'
  | 'invalid_json'
  | 'missing_parameter'
  | 'invalid_parameter'
  | 'unknown_parameter'
  | 'model_not_found'
  | 'input_not_supported'
  | 'missing_api_key'
  | 'invalid_api_key'
  | 'budget_exceeded'
  | 'invalid_signature'
  | 'task_not_found'
  | 'not_found'
  | 'idempotency_conflict'
  | 'task_not_cancellable'
  | 'task_not_deletable'
  | 'callback_not_configured'
  | 'request_timeout'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'range_not_satisfiable'
  | 'headers_too_large'
  | 'rate_limited'
  | 'internal_error'
  | 'overloaded'
  | 'storage_full';

/** Codes of failures that happen on the client's side of the connection. */
export type ClientErrorCode =
  /** The connection failed or broke before an answer arrived. */
  | 'connection_error'
  /** No answer within the client's `timeout` (no `status`; the server's own `408 request_timeout` has one). */
  | 'request_timeout'
  /** The server answered something that is not the API's JSON. */
  | 'unexpected_response';

export type WebhookErrorCode =
  | 'missing_webhook_headers'
  | 'invalid_webhook_timestamp'
  | 'webhook_timestamp_out_of_range'
  | 'invalid_webhook_signature'
  | 'invalid_webhook_secret'
  | 'invalid_webhook_body';

/** The API's codes, the client's own, a failed task's; `string & {}` keeps unknown future codes typed. */
export type VideogenErrorCode =
  | ApiErrorCode
  | ClientErrorCode
  | WebhookErrorCode
  | TaskErrorCode
  | (string & {});

export type ApiErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'not_found_error'
  | 'conflict_error'
  | 'rate_limit_error'
  | 'budget_error'
  | 'api_error';

export interface VideogenErrorDetails {
  readonly status?: number;
  readonly requestId?: string;
  readonly param?: string;
  readonly type?: ApiErrorType | (string & {});
  readonly headers?: Headers;
  readonly cause?: unknown;
}

export class VideogenError extends Error {
  readonly code: VideogenErrorCode;
  /** The HTTP status of the answer; undefined when no answer arrived. */
  readonly status: number | undefined;
  /** The answer's `x-request-id`: quote it to find the request in the server's logs. */
  readonly requestId: string | undefined;
  /** The request field at fault, e.g. `duration` or `image_urls[1]`. */
  readonly param: string | undefined;
  readonly type: ApiErrorType | (string & {}) | undefined;
  /** The answer's headers, when there was an answer. */
  readonly headers: Headers | undefined;

  constructor(code: VideogenErrorCode, message: string, details: VideogenErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = new.target.name;
    this.code = code;
    this.status = details.status;
    this.requestId = details.requestId;
    this.param = details.param;
    this.type = details.type;
    this.headers = details.headers;
  }
}

/** 400, 408, 413, 415, 416, 431: the request is wrong, or did not arrive whole in time. */
export class InvalidRequestError extends VideogenError {}

/** 401 and 403: a missing, unknown or revoked key (or a bad result-link signature). */
export class AuthenticationError extends VideogenError {}

/**
 * 402 `budget_exceeded`: the creation would pass a monthly limit (video seconds or cost) of the account or the key;
 * the message names the limit, what is used and when it resets. Not retried: waiting minutes does not help.
 */
export class BudgetError extends VideogenError {}

/** 404: no such task (or it belongs to another account or environment), or no such route. */
export class NotFoundError extends VideogenError {}

/** 409: the task's state forbids it (cancelling a final task, deleting a running one), or an idempotency conflict. */
export class ConflictError extends VideogenError {}

/** 429: over the API key's request rate. Retried automatically up to `maxRetries`. */
export class RateLimitError extends VideogenError {
  /** Seconds the server asked to wait (`Retry-After`), when it said. */
  readonly retryAfter: number | undefined;

  constructor(
    code: VideogenErrorCode,
    message: string,
    details: VideogenErrorDetails & { retryAfter?: number },
  ) {
    super(code, message, details);
    this.retryAfter = details.retryAfter;
  }
}

/**
 * 5xx: the server failed (`internal_error`), is overloaded (`overloaded`: its queue is full, its database busy)
 * or has no space left to write (`storage_full`). Retried automatically when the request is idempotent (reads,
 * deletions, creations); a cancel, a redelivery or an upload is not repeated.
 */
export class ServerError extends VideogenError {}

/** The connection failed or broke, or the server's answer was not the API's. */
export class ConnectionError extends VideogenError {}

/** No answer within the client's `timeout`. */
export class RequestTimeoutError extends ConnectionError {}

/** `generate` waited for a task that ended `failed`; `code` is the task's `error.code`. */
export class TaskFailedError extends VideogenError {
  readonly task: FailedTask;

  constructor(task: FailedTask) {
    super(task.error.code, task.error.message);
    this.task = task;
  }
}

/** `verifyWebhook` refused a callback: missing headers, a stale timestamp, or no matching signature. */
export class WebhookVerificationError extends VideogenError {}

type ErrorClass = new (
  code: VideogenErrorCode,
  message: string,
  details: VideogenErrorDetails,
) => VideogenError;

function errorClassOf(status: number): ErrorClass {
  if (status === 401 || status === 403) return AuthenticationError;
  if (status === 402) return BudgetError;
  if (status === 404) return NotFoundError;
  if (status === 409) return ConflictError;
  if (status === 429) return RateLimitError;
  if (status >= 500) return ServerError;
  return InvalidRequestError;
}

interface ErrorBody {
  readonly error: {
    readonly code: string;
    readonly message: string;
    readonly type?: string;
    readonly param?: string;
    readonly request_id?: string;
  };
}

function isErrorBody(value: unknown): value is ErrorBody {
  if (typeof value !== 'object' || value === null || !('error' in value)) return false;
  const error: unknown = value.error;
  return (
    typeof error === 'object' &&
    error !== null &&
    'code' in error &&
    typeof error.code === 'string' &&
    'message' in error &&
    typeof error.message === 'string'
  );
}

/** Seconds from a `Retry-After` header (delta-seconds or an HTTP date); undefined when absent or unreadable. */
export function parseRetryAfter(headers: Headers, now: number = Date.now()): number | undefined {
  const raw = headers.get('retry-after')?.trim();
  if (!raw) return undefined;
  if (/^\d+$/.test(raw)) return Number(raw);
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - now) / 1000);
}

/** The error a non-2xx answer stands for, from its body (`{ error: { code, message, … } }`) and headers. */
export function errorFromResponse(status: number, headers: Headers, bodyText: string): VideogenError {
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    body = undefined;
  }
  const requestId = headers.get('x-request-id') ?? undefined;
  const ErrorType = errorClassOf(status);
  let code: string;
  let message: string;
  let details: VideogenErrorDetails;
  if (isErrorBody(body)) {
    code = body.error.code;
    message = body.error.message;
    details = {
      status,
      requestId: requestId ?? body.error.request_id,
      param: body.error.param,
      type: body.error.type,
      headers,
    };
  } else {
    // Not the API's error body (a proxy's HTML page, say): one line of it, whitespace collapsed.
    const excerpt = bodyText.replace(/\s+/g, ' ').trim().slice(0, 200);
    code = 'unexpected_response';
    message = `HTTP ${status}${excerpt ? `: ${excerpt}` : ''}`;
    details = { status, requestId, headers };
  }
  if (ErrorType === RateLimitError) {
    // Whatever the body, a 429's Retry-After is what the retries wait for.
    return new RateLimitError(code, message, { ...details, retryAfter: parseRetryAfter(headers) });
  }
  return new ErrorType(code, message, details);
}

/**
 * The one catalogue of error codes: every error an HTTP client or a failed task can see is named here, with
 * what it means. `ApiError` is what request handling throws; `TaskErrorCode` is what a failed task carries.
 * These are plain values: the HTTP status, the body's `type` and the headers of each answer are the transport's
 * (http/error-statuses.ts, http/error-handler.ts).
 */

/** The codes a route's error can carry. */
export const API_ERRORS = {
  invalid_json: 'The request body is missing, empty, or not valid JSON.',
  missing_parameter: 'A required field of the request is missing.',
  invalid_parameter: 'A field of the request breaks its rule.',
  unknown_parameter: 'The request has a field the endpoint does not take.',
  model_not_found: 'No model has this ID.',
  input_not_supported:
    'The engine that renders the model cannot take an input the request has (audio for a model without).',
  missing_api_key: 'The request carries no API key.',
  invalid_api_key: 'The API key is unknown, revoked, or past its rotation grace period.',
  invalid_credentials: 'A dashboard sign-in with a wrong email or password.',
  not_signed_in: 'A dashboard request without a valid session.',
  invalid_callback_signature:
    "A provider's callback whose signature is missing, wrong, or dated more than 5 minutes from now.",
  budget_exceeded:
    'The creation would pass a monthly limit of the account or the API key (video seconds or cost).',
  invalid_signature: 'A result link whose signature is wrong or expired.',
  invalid_csrf_token: "A dashboard change without the session's CSRF token.",
  api_key_not_found: 'The dashboard names an API key its account does not have.',
  task_not_found: "No task has this ID (or it is another account's).",
  not_found: 'No route has this path and method, or the object is gone.',
  idempotency_conflict: 'The Idempotency-Key was used with a different request in the last 24 hours.',
  task_not_cancellable: 'The task is final: only pending and processing tasks can be cancelled.',
  task_not_deletable: 'The task is still running: only final tasks can be deleted.',
  callback_not_configured: 'A redelivery asked of a task without callback_url.',
  precondition_failed:
    "A conditional GET of one of the dashboard's files (`If-Match`, `If-Unmodified-Since`) that does not hold.",
  payload_too_large: "The request body is larger than the route's limit.",
  unsupported_media_type: 'The request body is of a type the route does not read.',
  range_not_satisfiable: 'The requested range is outside the file.',
  rate_limited: 'Too many requests: the client may try again later.',
  internal_error: 'The server failed to handle the request.',
  overloaded:
    'The queue is full, the server is shutting down, it holds as many large request bodies as it takes at ' +
    'once, or the database stayed busy with other writers.',
  storage_full: "No space is left to write the request's data (the disk, or the database server's, is full).",
  upstream_unavailable:
    "A provider's callback could not be verified: the provider's keys could not be fetched.",
} as const satisfies Record<string, string>;

export type ApiErrorCode = keyof typeof API_ERRORS;

/**
 * What the HTTP server answers on its own to a request it cannot read: Node's parser refused it, its path is
 * not valid percent-encoding, it has no Host header, or it did not arrive in time. These are answered before
 * any route's handler runs (most are written straight to the socket), so no route throws them and they stay out
 * of `ApiErrorCode`; any request may get them, so the OpenAPI document lists them on every operation and the SDK
 * knows them (`ErrorCode`). Same body shape.
 */
export const CONNECTION_ERRORS = {
  malformed_request:
    'The request is not valid HTTP/1.1, has no Host header, or its path is not percent-encoded.',
  request_timeout: 'The headers or the body did not arrive in time.',
  headers_too_large: 'The request line and headers are larger than the server accepts.',
} as const satisfies Record<string, string>;

export type ConnectionErrorCode = keyof typeof CONNECTION_ERRORS;

/** Every code an error body can carry: the routes' and the connection's. */
export type ErrorCode = ApiErrorCode | ConnectionErrorCode;

/** Every code an error body can carry, with what it means. */
export const ERROR_CATALOGUE: Readonly<Record<ErrorCode, string>> = {
  ...API_ERRORS,
  ...CONNECTION_ERRORS,
};

export function isApiErrorCode(code: string): code is ApiErrorCode {
  return Object.hasOwn(API_ERRORS, code);
}

/** A failure of request handling, as a value: what the transport answers is decided at the edge (http/). */
export class ApiError extends Error {
  readonly code: ApiErrorCode;
  readonly param: string | undefined;
  /** For a failure that passes (a limit's window, a full queue): the seconds after which trying again may work. */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    code: ApiErrorCode,
    message: string,
    options: { param?: string; retryAfterSeconds?: number } = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.param = options.param;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/** Codes a failed task carries in `error.code`. */
export const TASK_ERROR_CODES = [
  'cancelled',
  'expired',
  'asset_fetch_failed',
  'invalid_asset',
  'generation_failed',
  /** The model server or command an engine hands the work to refused or failed it. */
  'upstream_error',
  /** The model server could not be reached, or kept answering 429/5xx, within the task's time limit. */
  'upstream_unavailable',
  /** The model's provider refused the request's content or inputs (a content policy); not retried. */
  'upstream_refused',
  'timeout',
  /** No space was left to write the task's files or its video (the disk was full). */
  'storage_full',
  'worker_lost',
  'internal_error',
] as const;

export type TaskErrorCode = (typeof TASK_ERROR_CODES)[number];

/** Thrown while running a task; the runner turns it into the task's `error`. */
export class TaskFailure extends Error {
  readonly code: TaskErrorCode;

  constructor(code: TaskErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TaskFailure';
    this.code = code;
  }
}

/**
 * The one catalogue of error codes: every error an HTTP client or a failed task can see is named here.
 * `ApiError` is what request handling throws; `TaskErrorCode` is what a failed task carries.
 */

export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'not_found_error'
  | 'conflict_error'
  | 'rate_limit_error'
  | 'budget_error'
  | 'api_error';

export const API_ERRORS = {
  invalid_json: { status: 400, type: 'invalid_request_error' },
  missing_parameter: { status: 400, type: 'invalid_request_error' },
  invalid_parameter: { status: 400, type: 'invalid_request_error' },
  unknown_parameter: { status: 400, type: 'invalid_request_error' },
  model_not_found: { status: 400, type: 'invalid_request_error' },
  /** The engine that renders the model cannot take an input the request has (audio for a model without). */
  input_not_supported: { status: 400, type: 'invalid_request_error' },
  missing_api_key: { status: 401, type: 'authentication_error' },
  invalid_api_key: { status: 401, type: 'authentication_error' },
  invalid_credentials: { status: 401, type: 'authentication_error' },
  not_signed_in: { status: 401, type: 'authentication_error' },
  /** A provider's callback whose signature is missing, wrong, or dated more than 5 minutes from now. */
  invalid_callback_signature: { status: 401, type: 'authentication_error' },
  /** The creation would pass a monthly limit of the account or the API key (video seconds or cost). */
  budget_exceeded: { status: 402, type: 'budget_error' },
  invalid_signature: { status: 403, type: 'authentication_error' },
  invalid_csrf_token: { status: 403, type: 'authentication_error' },
  api_key_not_found: { status: 404, type: 'not_found_error' },
  task_not_found: { status: 404, type: 'not_found_error' },
  not_found: { status: 404, type: 'not_found_error' },
  idempotency_conflict: { status: 409, type: 'conflict_error' },
  task_not_cancellable: { status: 409, type: 'conflict_error' },
  task_not_deletable: { status: 409, type: 'conflict_error' },
  callback_not_configured: { status: 409, type: 'conflict_error' },
  /** A conditional GET of one of the dashboard's files (`If-Match`, `If-Unmodified-Since`) that does not hold. */
  precondition_failed: { status: 412, type: 'invalid_request_error' },
  payload_too_large: { status: 413, type: 'invalid_request_error' },
  unsupported_media_type: { status: 415, type: 'invalid_request_error' },
  range_not_satisfiable: { status: 416, type: 'invalid_request_error' },
  rate_limited: { status: 429, type: 'rate_limit_error' },
  internal_error: { status: 500, type: 'api_error' },
  /**
   * The queue is full, the server is shutting down, it holds as many large request bodies as it takes at once, or
   * the database stayed busy with other writers.
   */
  overloaded: { status: 503, type: 'api_error' },
  /** No space is left to write the request's data (the disk, or the database server's, is full). */
  storage_full: { status: 503, type: 'api_error' },
  /** A provider's callback could not be verified: the provider's keys could not be fetched. */
  upstream_unavailable: { status: 503, type: 'api_error' },
} as const satisfies Record<string, { status: number; type: ErrorType }>;

export type ApiErrorCode = keyof typeof API_ERRORS;

/**
 * What the HTTP server answers on its own to a request it cannot read: Node's parser refused it, its path is
 * not valid percent-encoding, it has no Host header, or it did not arrive in time. These are answered before
 * any route's handler runs (most are written straight to the socket), so no route throws them and they stay out
 * of `ApiErrorCode`; any request may get them, so the OpenAPI document lists them on every operation and the SDK
 * knows them (`ErrorCode`). Same body shape.
 */
export const CONNECTION_ERRORS = {
  malformed_request: { status: 400, type: 'invalid_request_error' },
  request_timeout: { status: 408, type: 'invalid_request_error' },
  headers_too_large: { status: 431, type: 'invalid_request_error' },
} as const satisfies Record<string, { status: number; type: ErrorType }>;

export type ConnectionErrorCode = keyof typeof CONNECTION_ERRORS;

/** Every code an error body can carry: the routes' and the connection's. */
export type ErrorCode = ApiErrorCode | ConnectionErrorCode;

export const ERROR_CATALOGUE: Readonly<Record<ErrorCode, { status: number; type: ErrorType }>> = {
  ...API_ERRORS,
  ...CONNECTION_ERRORS,
};

/**
 * The `type` of an error in OpenAI's envelope (the OpenAI Videos API routes, `/v1/videos`), from its HTTP status,
 * as OpenAI's API answers: `invalid_request_error` for the client's errors (a wrong API key included),
 * `insufficient_quota` for a spent budget, `requests` for the request rate, `server_error` for the server's.
 * The code stays this catalogue's.
 */
export const OPENAI_ERROR_TYPES = [
  'invalid_request_error',
  'insufficient_quota',
  'requests',
  'server_error',
] as const;

export type OpenAiErrorType = (typeof OPENAI_ERROR_TYPES)[number];

export function openAiErrorType(status: number): OpenAiErrorType {
  if (status >= 500) return 'server_error';
  if (status === 402) return 'insufficient_quota';
  if (status === 429) return 'requests';
  return 'invalid_request_error';
}

export class ApiError extends Error {
  readonly code: ApiErrorCode;
  readonly status: number;
  readonly type: ErrorType;
  readonly param: string | undefined;
  readonly headers: Record<string, string>;

  constructor(
    code: ApiErrorCode,
    message: string,
    options: { param?: string; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.status = API_ERRORS[code].status;
    this.type = API_ERRORS[code].type;
    this.param = options.param;
    this.headers = options.headers ?? {};
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

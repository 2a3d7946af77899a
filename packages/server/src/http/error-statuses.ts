/**
 * What each error code of the catalogue (domain/errors.ts) is on the wire: its HTTP status and the `type` of
 * its body. One table for every code; it must name each one (a code without a row does not compile).
 */
import type { ErrorCode } from '../domain/errors.js';

export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'not_found_error'
  | 'conflict_error'
  | 'rate_limit_error'
  | 'budget_error'
  | 'api_error';

export interface ErrorStatus {
  readonly status: number;
  readonly type: ErrorType;
}

export const ERROR_STATUSES = {
  malformed_request: { status: 400, type: 'invalid_request_error' },
  invalid_json: { status: 400, type: 'invalid_request_error' },
  missing_parameter: { status: 400, type: 'invalid_request_error' },
  invalid_parameter: { status: 400, type: 'invalid_request_error' },
  unknown_parameter: { status: 400, type: 'invalid_request_error' },
  model_not_found: { status: 400, type: 'invalid_request_error' },
  input_not_supported: { status: 400, type: 'invalid_request_error' },
  missing_api_key: { status: 401, type: 'authentication_error' },
  invalid_api_key: { status: 401, type: 'authentication_error' },
  invalid_credentials: { status: 401, type: 'authentication_error' },
  not_signed_in: { status: 401, type: 'authentication_error' },
  invalid_callback_signature: { status: 401, type: 'authentication_error' },
  budget_exceeded: { status: 402, type: 'budget_error' },
  invalid_signature: { status: 403, type: 'authentication_error' },
  invalid_csrf_token: { status: 403, type: 'authentication_error' },
  api_key_not_found: { status: 404, type: 'not_found_error' },
  task_not_found: { status: 404, type: 'not_found_error' },
  not_found: { status: 404, type: 'not_found_error' },
  request_timeout: { status: 408, type: 'invalid_request_error' },
  idempotency_conflict: { status: 409, type: 'conflict_error' },
  task_not_cancellable: { status: 409, type: 'conflict_error' },
  task_not_deletable: { status: 409, type: 'conflict_error' },
  callback_not_configured: { status: 409, type: 'conflict_error' },
  precondition_failed: { status: 412, type: 'invalid_request_error' },
  payload_too_large: { status: 413, type: 'invalid_request_error' },
  unsupported_media_type: { status: 415, type: 'invalid_request_error' },
  range_not_satisfiable: { status: 416, type: 'invalid_request_error' },
  rate_limited: { status: 429, type: 'rate_limit_error' },
  headers_too_large: { status: 431, type: 'invalid_request_error' },
  internal_error: { status: 500, type: 'api_error' },
  overloaded: { status: 503, type: 'api_error' },
  storage_full: { status: 503, type: 'api_error' },
  upstream_unavailable: { status: 503, type: 'api_error' },
} as const satisfies Record<ErrorCode, ErrorStatus>;

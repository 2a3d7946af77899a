/**
 * Google's error answer, `{"error": {"code", "message", "status", "details"}}` (google.rpc.Status as JSON,
 * the same for every Google API), read for what the engine decides on: the canonical `status`
 * (INVALID_ARGUMENT, NOT_FOUND, RESOURCE_EXHAUSTED…), the `ErrorInfo` reason (API_KEY_INVALID), and for a 429
 * the `RetryInfo` delay and the `QuotaFailure` quota. The Gemini API sends no `Retry-After` header: how long
 * to wait is only in `RetryInfo.retryDelay`, a protobuf Duration such as "33s" or "34.4s".
 */
import { excerptOf } from '../upstream-request.js';

export interface GoogleError {
  readonly httpStatus: number;
  /** The canonical code's name: `INVALID_ARGUMENT`; undefined when the body is not Google's envelope. */
  readonly status: string | undefined;
  /** Google's message, or the start of the body when it is not the envelope. */
  readonly message: string;
  /** `ErrorInfo.reason`: `API_KEY_INVALID`, `API_KEY_SERVICE_BLOCKED`… */
  readonly reason: string | undefined;
  /** `RetryInfo.retryDelay` in milliseconds. */
  readonly retryDelayMs: number | undefined;
  /**
   * A quota that will not come back soon: a per-day quota, or one of 0 (Veo has no free tier), where
   * retrying within a task's time limit only repeats the 429.
   */
  readonly lastingQuota: boolean;
}

const MESSAGE_CHARS = 500;

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** A protobuf Duration in JSON ("33s", "34.4s", "0.050s") as milliseconds. */
export function durationMs(value: unknown): number | undefined {
  const match = typeof value === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(value.trim()) : null;
  return match ? Math.round(Number(match[1]) * 1000) : undefined;
}

function detailsOfType(details: unknown, type: string): Json[] {
  if (!Array.isArray(details)) return [];
  return details.filter((detail): detail is Json => isObject(detail) && detail['@type'] === type);
}

function lastingQuota(details: unknown): boolean {
  return detailsOfType(details, 'type.googleapis.com/google.rpc.QuotaFailure').some((failure) => {
    const violations = Array.isArray(failure.violations) ? failure.violations : [];
    return violations.some(
      (violation) =>
        isObject(violation) &&
        (text(violation.quotaId)?.includes('PerDay') === true || text(violation.quotaValue) === '0'),
    );
  });
}

function oneLine(value: string): string {
  const line = value.replace(/\s+/g, ' ').trim();
  return line.length > MESSAGE_CHARS ? `${line.slice(0, MESSAGE_CHARS)}…` : line;
}

export function parseGoogleError(httpStatus: number, body: string): GoogleError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  const error = isObject(parsed) && isObject(parsed.error) ? parsed.error : undefined;
  if (!error) {
    return {
      httpStatus,
      status: undefined,
      message: excerptOf(body),
      reason: undefined,
      retryDelayMs: undefined,
      lastingQuota: false,
    };
  }
  const info = detailsOfType(error.details, 'type.googleapis.com/google.rpc.ErrorInfo')[0];
  const retry = detailsOfType(error.details, 'type.googleapis.com/google.rpc.RetryInfo')[0];
  return {
    httpStatus,
    status: text(error.status),
    message: oneLine(text(error.message) ?? ''),
    reason: text(info?.reason),
    retryDelayMs: durationMs(retry?.retryDelay),
    lastingQuota: lastingQuota(error.details),
  };
}

/** `HTTP 400 INVALID_ARGUMENT: API key not valid…` */
export function describeGoogleError(error: GoogleError): string {
  const status = [error.status, error.reason].filter(Boolean).join(' ');
  return `HTTP ${error.httpStatus}${status ? ` ${status}` : ''}${error.message ? `: ${error.message}` : ''}`;
}

/**
 * The `Idempotency-Key` header of a creation: any 1 to 255 visible ASCII characters (a UUID is usual), and
 * the fingerprint of the request it guards, so that a repeat is told from a different request.
 */
import { createHash } from 'node:crypto';
import { ApiError } from './errors.js';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
/** How long a key keeps returning the task it made. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

export function parseIdempotencyKey(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (Array.isArray(value) || !/^[\x21-\x7e]{1,255}$/.test(value)) {
    throw new ApiError(
      'invalid_parameter',
      `${IDEMPOTENCY_HEADER} must be one header of 1 to 255 visible ASCII characters.`,
      { param: IDEMPOTENCY_HEADER },
    );
  }
  return value;
}

/**
 * SHA-256 of the request body as the client sent it, keys sorted: not of the validated request, whose
 * defaults include a random seed, so two sends of one body would differ.
 */
export function requestFingerprint(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

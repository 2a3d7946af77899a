/**
 * The idempotency key of a creation: any 1 to 255 visible ASCII characters (a UUID is usual), and the
 * fingerprint of the request it guards, so that a repeat is told from a different request. How a request carries
 * it is the transport's (http/idempotency-key-header.ts).
 */
import { createHash } from 'node:crypto';

/** What errors about the key call it (`param`): the name clients know it by. */
export const IDEMPOTENCY_KEY_NAME = 'Idempotency-Key';
/** How long a key keeps returning the task it made. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

export function isIdempotencyKey(value: string): boolean {
  return /^[\x21-\x7e]{1,255}$/.test(value);
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

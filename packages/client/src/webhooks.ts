/**
 * Verifying a callback (Standard Webhooks): `webhook-signature` holds one or more space-separated
 * `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, keyed by the bytes the `whsec_<base64>` secret encodes.
 * Web Crypto only, so it runs on Node.js, Deno, Bun, browsers and edge runtimes.
 *
 * The signature covers the body's exact bytes: verify the raw body as received, before any JSON parsing
 * (see docs/sdk.md for Express, Fastify, Hono and plain Node).
 */
import { WebhookVerificationError } from './errors.js';
import type { Task } from './types.js';

const SECRET_PREFIX = 'whsec_';
export const DEFAULT_WEBHOOK_TOLERANCE_SECONDS = 5 * 60;

/** A fetch `Headers`, or a plain record such as Node's `IncomingHttpHeaders`. */
export type WebhookHeaders =
  | { get(name: string): string | null }
  | Readonly<Record<string, string | readonly string[] | undefined>>;

export interface VerifyWebhookOptions {
  /** How far the `webhook-timestamp` may be from now, either way, in seconds (default 300). */
  readonly toleranceSeconds?: number;
  /** The current time in ms; for tests. */
  readonly now?: number;
}

function headerOf(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof headers.get === 'function') {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  }
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  const key = Object.keys(record).find((candidate) => candidate.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return typeof value === 'string' ? value : value?.[0];
}

function base64ToBytes(base64: string): Uint8Array<ArrayBuffer> {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function secretKeyBytes(secret: string): Uint8Array<ArrayBuffer> {
  try {
    const bytes = base64ToBytes(
      secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret,
    );
    if (bytes.length > 0) return bytes;
  } catch {
    // Reported below.
  }
  throw new WebhookVerificationError(
    'invalid_webhook_secret',
    'The webhook secret is not whsec_ and base64.',
  );
}

/** Compares in time that depends on the length only, so a forger learns nothing from how long it took. */
function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return difference === 0;
}

function bodyBytes(body: string | Uint8Array | ArrayBuffer): Uint8Array<ArrayBuffer> {
  if (typeof body === 'string') return new TextEncoder().encode(body);
  // By tag rather than `instanceof`, so that bytes from another realm (a vm context, an iframe) pass too.
  if (Object.prototype.toString.call(body) === '[object ArrayBuffer]') {
    return new Uint8Array(body as ArrayBuffer).slice();
  }
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength).slice();
  throw new TypeError(
    'verifyWebhook needs the raw body (a string, Uint8Array or ArrayBuffer), not parsed JSON',
  );
}

/**
 * Checks a callback's signature and timestamp and answers the task it carries. Throws
 * `WebhookVerificationError` (`code`: `missing_webhook_headers`, `invalid_webhook_timestamp`,
 * `webhook_timestamp_out_of_range`, `invalid_webhook_signature`, `invalid_webhook_body`) when it must be
 * refused. `secret` may be several (e.g. the old and the new during a rotation): any one matching is enough.
 */
export async function verifyWebhook(
  body: string | Uint8Array | ArrayBuffer,
  headers: WebhookHeaders,
  secret: string | readonly string[],
  options: VerifyWebhookOptions = {},
): Promise<Task> {
  const id = headerOf(headers, 'webhook-id');
  const timestamp = headerOf(headers, 'webhook-timestamp');
  const signatureHeader = headerOf(headers, 'webhook-signature');
  if (!id || !timestamp || !signatureHeader) {
    throw new WebhookVerificationError(
      'missing_webhook_headers',
      'The webhook-id, webhook-timestamp and webhook-signature headers are required.',
    );
  }
  if (!/^\d{1,15}$/.test(timestamp)) {
    throw new WebhookVerificationError('invalid_webhook_timestamp', 'webhook-timestamp is not Unix seconds.');
  }
  const nowSeconds = Math.floor((options.now ?? Date.now()) / 1000);
  const tolerance = options.toleranceSeconds ?? DEFAULT_WEBHOOK_TOLERANCE_SECONDS;
  if (Math.abs(nowSeconds - Number(timestamp)) > tolerance) {
    throw new WebhookVerificationError(
      'webhook_timestamp_out_of_range',
      `webhook-timestamp is more than ${tolerance} s from now; a replayed or delayed message is refused.`,
    );
  }

  const payload = bodyBytes(body);
  const prefix = new TextEncoder().encode(`${id}.${timestamp}.`);
  const signed = new Uint8Array(prefix.length + payload.length);
  signed.set(prefix);
  signed.set(payload, prefix.length);

  const candidates = signatureHeader
    .split(' ')
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => {
      try {
        return base64ToBytes(entry.slice(3));
      } catch {
        return undefined;
      }
    })
    .filter((bytes) => bytes !== undefined);

  let matched = false;
  for (const oneSecret of typeof secret === 'string' ? [secret] : secret) {
    const key = await crypto.subtle.importKey(
      'raw',
      secretKeyBytes(oneSecret),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign'],
    );
    const expected = new Uint8Array(await crypto.subtle.sign('HMAC', key, signed));
    // Every candidate is compared, match or not, so timing does not tell which one matched.
    for (const candidate of candidates) matched = constantTimeEqual(expected, candidate) || matched;
  }
  if (!matched) {
    throw new WebhookVerificationError(
      'invalid_webhook_signature',
      'No webhook-signature matches the secret.',
    );
  }

  try {
    return JSON.parse(new TextDecoder().decode(payload)) as Task;
  } catch {
    throw new WebhookVerificationError('invalid_webhook_body', 'The webhook body is not JSON.');
  }
}

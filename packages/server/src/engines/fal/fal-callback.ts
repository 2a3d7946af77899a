/**
 * fal's webhooks: with `?fal_webhook=<url>` on the queue submission, fal POSTs to the URL once the request is done,
 * `{"request_id", "gateway_request_id", "status": "OK" | "ERROR", "payload", "error"?}`, retried 10 times over 2
 * hours when it is not delivered (https://docs.fal.ai/model-endpoints/webhooks; fal-ai/fal-js
 * `libs/client/src/queue.ts`, `query: { fal_webhook: webhookUrl }`). `request_id` is the queue's id, the one the
 * engine stored.
 *
 * Every delivery is signed with ED25519 (the same page, "Verifying Your Webhook"): `X-Fal-Webhook-Request-Id`,
 * `X-Fal-Webhook-User-Id`, `X-Fal-Webhook-Timestamp` (Unix seconds) and `X-Fal-Webhook-Signature` (hex); the signed
 * message is the request id, the user id, the timestamp and the hex SHA-256 of the body, joined by newlines; the
 * public keys are the JWKS at https://rest.alpha.fal.ai/.well-known/jwks.json (`OKP`/`Ed25519`, `x` base64url),
 * any of which may have signed it, to be cached (a day here, fetched again when a delivery does not verify, at
 * most every 5 minutes); a timestamp more than 5 minutes from now is refused. Node's own crypto verifies.
 */
import { createHash, createPublicKey, type KeyObject, verify } from 'node:crypto';
import type { Dispatcher } from 'undici';
import type { CallbackDelivery, CallbackVerdict, CallbackVerifier } from '../../ports/provider-callback.js';
import { deliveryHeader, deliveryObject, upstreamIdOf } from '../callbacks/callback-delivery.js';
import { FetchedKeys } from '../callbacks/fetched-keys.js';
import { fetchKeysJson } from '../callbacks/key-fetch.js';

export const FAL_JWKS_URL = 'https://rest.alpha.fal.ai/.well-known/jwks.json';

const HEADERS = {
  requestId: 'x-fal-webhook-request-id',
  userId: 'x-fal-webhook-user-id',
  timestamp: 'x-fal-webhook-timestamp',
  signature: 'x-fal-webhook-signature',
} as const;
const TOLERANCE_SECONDS = 5 * 60;
const DAY_MS = 24 * 3600_000;
const RETRY_AFTER_MS = 5 * 60_000;

export interface FalWebhookOptions {
  /** Names the engine in messages. */
  readonly label: string;
  /** The JWKS; `FAL_JWKS_URL` when absent. */
  readonly jwksUrl?: string;
  readonly dispatcher?: Dispatcher;
  /** Epoch ms, for the timestamp's tolerance. */
  readonly now?: () => number;
}

export class FalWebhookVerifier implements CallbackVerifier {
  readonly #options: FalWebhookOptions;
  readonly #now: () => number;
  readonly #keys: FetchedKeys<readonly KeyObject[]>;

  constructor(options: FalWebhookOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#keys = new FetchedKeys({
      fetch: () => this.#fetchKeys(),
      maxAgeMs: DAY_MS,
      retryAfterMs: RETRY_AFTER_MS,
      now: this.#now,
    });
  }

  async verify(delivery: CallbackDelivery): Promise<CallbackVerdict> {
    const values: Partial<Record<keyof typeof HEADERS, string>> = {};
    for (const [field, name] of Object.entries(HEADERS) as [keyof typeof HEADERS, string][]) {
      const value = deliveryHeader(delivery, name);
      if (value === undefined) {
        return { kind: 'bad_signature', message: `A fal webhook is signed: the ${name} header is missing.` };
      }
      values[field] = value;
    }
    const { requestId, userId, timestamp, signature } = values as Record<keyof typeof HEADERS, string>;
    if (!/^\d{1,12}$/.test(timestamp)) {
      return { kind: 'bad_signature', message: `${HEADERS.timestamp} is not Unix seconds.` };
    }
    if (Math.abs(this.#now() / 1000 - Number(timestamp)) > TOLERANCE_SECONDS) {
      return {
        kind: 'bad_signature',
        message: `${HEADERS.timestamp} is more than ${TOLERANCE_SECONDS / 60} minutes from now.`,
      };
    }
    if (!/^([0-9a-f]{2})+$/i.test(signature)) {
      return { kind: 'bad_signature', message: `${HEADERS.signature} is not hex.` };
    }
    const digest = createHash('sha256').update(delivery.body).digest('hex');
    const message = Buffer.from([requestId, userId, timestamp, digest].join('\n'));
    const bytes = Buffer.from(signature, 'hex');
    let keys: readonly KeyObject[];
    try {
      keys = await this.#keys.get();
    } catch (error) {
      return { kind: 'unverifiable', message: error instanceof Error ? error.message : String(error) };
    }
    const signedBy = (key: KeyObject) => {
      try {
        return verify(null, message, key, bytes);
      } catch {
        return false;
      }
    };
    let signed = keys.some(signedBy);
    if (!signed) {
      const fresh = await this.#keys.refreshed().catch(() => undefined);
      signed = fresh?.some(signedBy) ?? false;
    }
    if (!signed) {
      return { kind: 'bad_signature', message: "The fal webhook's signature is not one of fal's keys'." };
    }
    const id = upstreamIdOf(deliveryObject(delivery)?.request_id);
    if (!id) return { kind: 'bad_body', message: 'A fal webhook is a JSON object with a `request_id`.' };
    return { kind: 'job', upstreamId: id };
  }

  async #fetchKeys(): Promise<readonly KeyObject[]> {
    const { label, dispatcher } = this.#options;
    const url = this.#options.jwksUrl ?? FAL_JWKS_URL;
    const answer = await fetchKeysJson({ method: 'GET', url }, { label, ...(dispatcher && { dispatcher }) });
    const listed = (answer as { keys?: unknown } | null)?.keys;
    const keys: KeyObject[] = [];
    for (const jwk of Array.isArray(listed) ? listed : []) {
      const { kty, crv, x } = (jwk ?? {}) as { kty?: unknown; crv?: unknown; x?: unknown };
      if (kty !== 'OKP' || crv !== 'Ed25519' || typeof x !== 'string') continue;
      try {
        keys.push(createPublicKey({ key: { kty, crv, x }, format: 'jwk' }));
      } catch {
        // A key Node cannot read cannot have signed anything we could check.
      }
    }
    if (keys.length === 0) throw new Error(`${label}: ${url} lists no Ed25519 key.`);
    return keys;
  }
}

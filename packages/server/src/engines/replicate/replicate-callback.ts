/**
 * Replicate's webhooks: with `webhook` (an HTTPS URL) and `webhook_events_filter` in the create request,
 * Replicate POSTs the prediction object (the body of `GET /v1/predictions/{id}`) there; `completed` is sent when
 * the prediction ends, and retried on a 4xx or 5xx answer (https://replicate.com/docs/topics/webhooks,
 * …/setup-webhook, …/receive-webhook; https://replicate.com/docs/reference/http#predictions.create).
 *
 * Every delivery is signed as Standard Webhooks prescribe (https://replicate.com/docs/topics/webhooks/verify-webhook):
 * `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature` (space-separated `v1,<base64>` HMAC-SHA256
 * of `id.timestamp.body` under the account's `whsec_…` secret). The `standardwebhooks` library checks them, and
 * refuses a timestamp more than 5 minutes from now. The secret is the engine's `webhook_secret`, or the one
 * `GET /v1/webhooks/default/secret` answers for its key (`{"key": "whsec_…"}`), kept a day and fetched again when a
 * delivery does not verify (at most every 5 minutes).
 */

import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { Dispatcher } from 'undici';
import type { CallbackDelivery, CallbackVerdict, CallbackVerifier } from '../../ports/provider-callback.js';
import { deliveryHeader, deliveryObject, upstreamIdOf } from '../callbacks/callback-delivery.js';
import { FetchedKeys } from '../callbacks/fetched-keys.js';
import { fetchKeysJson } from '../callbacks/key-fetch.js';
import { urlUnder } from '../hosted/hosted-options.js';

const HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;
const DAY_MS = 24 * 3600_000;
const RETRY_AFTER_MS = 5 * 60_000;

export interface ReplicateWebhookOptions {
  /** Names the engine in messages. */
  readonly label: string;
  readonly baseUrl: string;
  readonly apiKey: string;
  /** The engines file's `webhook_secret`; fetched with the key when absent. */
  readonly secret?: string;
  readonly dispatcher?: Dispatcher;
}

export class ReplicateWebhookVerifier implements CallbackVerifier {
  readonly #options: ReplicateWebhookOptions;
  readonly #secret: FetchedKeys<string> | undefined;

  /** Throws an Error naming the problem when `webhook_secret` is not a secret. */
  constructor(options: ReplicateWebhookOptions) {
    if (options.secret !== undefined) {
      try {
        new Webhook(options.secret);
      } catch (error) {
        throw new Error(`webhook_secret: not a Standard Webhooks secret (${messageOf(error)})`);
      }
    }
    this.#options = options;
    this.#secret = options.secret
      ? undefined
      : new FetchedKeys({ fetch: () => this.#fetchSecret(), maxAgeMs: DAY_MS, retryAfterMs: RETRY_AFTER_MS });
  }

  async verify(delivery: CallbackDelivery): Promise<CallbackVerdict> {
    const headers: Record<string, string> = {};
    for (const name of HEADERS) {
      const value = deliveryHeader(delivery, name);
      if (value === undefined) {
        return {
          kind: 'bad_signature',
          message: `A Replicate webhook is signed: the ${name} header is missing.`,
        };
      }
      headers[name] = value;
    }
    let secret: string;
    try {
      secret = this.#options.secret ?? (await (this.#secret as FetchedKeys<string>).get());
    } catch (error) {
      return { kind: 'unverifiable', message: messageOf(error) };
    }
    let problem = signatureProblem(secret, delivery.body, headers);
    if (problem && this.#secret && problem !== STALE) {
      const fresh = await this.#secret.refreshed().catch(() => undefined);
      if (fresh !== undefined && fresh !== secret) problem = signatureProblem(fresh, delivery.body, headers);
    }
    if (problem) return { kind: 'bad_signature', message: `The Replicate webhook's signature: ${problem}` };
    const id = upstreamIdOf(deliveryObject(delivery)?.id);
    if (!id) return { kind: 'bad_body', message: 'A Replicate webhook is a prediction object with an `id`.' };
    return { kind: 'job', upstreamId: id };
  }

  async #fetchSecret(): Promise<string> {
    const { label, apiKey, baseUrl, dispatcher } = this.#options;
    const answer = await fetchKeysJson(
      {
        method: 'GET',
        url: urlUnder(baseUrl, 'v1/webhooks/default/secret'),
        headers: { authorization: `Bearer ${apiKey}` },
      },
      { label, secret: apiKey, ...(dispatcher && { dispatcher }) },
    );
    const key = (answer as { key?: unknown } | null)?.key;
    if (typeof key !== 'string' || !key.startsWith('whsec_')) {
      throw new Error(`${label}: GET /v1/webhooks/default/secret answered no whsec_ key.`);
    }
    return key;
  }
}

/** The library's message for a timestamp out of its 5 minutes: a fresh secret would not help. */
const STALE = 'the timestamp is more than 5 minutes from now';

/** Why the signature does not hold, or undefined when it does. */
function signatureProblem(secret: string, body: Buffer, headers: Record<string, string>): string | undefined {
  try {
    new Webhook(secret).verify(body, headers, { jsonParse: false });
    return undefined;
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) return messageOf(error);
    return /too (old|new)/i.test(error.message) ? STALE : error.message;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

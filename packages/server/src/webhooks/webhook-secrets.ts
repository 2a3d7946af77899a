/** An account's callback signing secrets, for the dashboard and `videogen webhooks`: read them, rotate them. */
import type { DeliveryStore, WebhookSecret } from '../ports/store.js';
import { WEBHOOK_SECRET_OVERLAP_MS } from './webhook-signature.js';

export interface WebhookSecrets {
  /** The secret that signs from now on. */
  readonly current: WebhookSecret;
  /** Secrets rotated out that still sign beside it, until their `expiresAt`. */
  readonly previous: readonly WebhookSecret[];
}

export async function webhookSecrets(
  store: Pick<DeliveryStore, 'getWebhookSecrets'>,
  accountId: string,
): Promise<WebhookSecrets> {
  const [current, ...previous] = await store.getWebhookSecrets(accountId);
  if (!current) throw new Error(`account ${accountId} has no webhook signing secret`);
  return { current, previous };
}

/** A new current secret; the one it replaces keeps signing for `WEBHOOK_SECRET_OVERLAP_MS`. */
export function rotateWebhookSecret(
  store: Pick<DeliveryStore, 'rotateWebhookSecret'>,
  accountId: string,
): Promise<WebhookSecret> {
  return store.rotateWebhookSecret(accountId, WEBHOOK_SECRET_OVERLAP_MS);
}

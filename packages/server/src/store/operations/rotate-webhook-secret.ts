import type { Kysely } from 'kysely';
import { newWebhookSecret } from '../../domain/identifiers.js';
import type { WebhookSecret } from '../../ports/store.js';
import type { Database } from '../database-schema.js';

/**
 * Makes a new current secret; the secrets current until now keep signing (beside the new one) for
 * `overlapMs`, so receivers can switch without missing a callback.
 */
export async function rotateWebhookSecret(
  db: Kysely<Database>,
  accountId: string,
  overlapMs: number,
  now: number,
): Promise<WebhookSecret> {
  return db.transaction().execute(async (trx) => {
    await trx
      .updateTable('webhook_secrets')
      .set({ expires_at: now + overlapMs })
      .where('account_id', '=', accountId)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now + overlapMs)]))
      .execute();
    const secret = { secret: newWebhookSecret(), createdAt: now, expiresAt: null };
    await trx
      .insertInto('webhook_secrets')
      .values({ secret: secret.secret, account_id: accountId, created_at: now, expires_at: null })
      .execute();
    return secret;
  });
}

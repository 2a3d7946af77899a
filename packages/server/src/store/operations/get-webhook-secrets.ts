import type { Kysely } from 'kysely';
import type { WebhookSecret } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { millis, nullableMillis } from '../task-row.js';

/** The account's secrets that still sign at `now`, newest (the current one) first. */
export async function getWebhookSecrets(
  db: Kysely<Database>,
  accountId: string,
  now: number,
): Promise<WebhookSecret[]> {
  const rows = await db
    .selectFrom('webhook_secrets')
    .selectAll()
    .where('account_id', '=', accountId)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .orderBy('created_at', 'desc')
    .execute();
  return rows.map((row) => ({
    secret: row.secret,
    createdAt: millis(row.created_at),
    expiresAt: nullableMillis(row.expires_at),
  }));
}

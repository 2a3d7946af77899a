import type { Kysely } from 'kysely';
import type { WebhookSecret } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { millis, nullableMillis } from '../task-row.js';

/** The account's secrets that still sign at `now`: the current one first, then the others newest first. */
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
    // The current secret first even when a rotation shares its millisecond (or another process's clock ran
    // behind): `created_at` alone ties, and PostgreSQL then returned the retired secret first.
    .orderBy((eb) => eb('expires_at', 'is', null), 'desc')
    .orderBy('created_at', 'desc')
    .execute();
  return rows.map((row) => ({
    secret: row.secret,
    createdAt: millis(row.created_at),
    expiresAt: nullableMillis(row.expires_at),
  }));
}

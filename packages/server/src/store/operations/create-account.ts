import type { Kysely } from 'kysely';
import { newId, newWebhookSecret } from '../../domain/identifiers.js';
import type { Account, AccountOwner } from '../../ports/store.js';
import type { Database } from '../database-schema.js';

/** An account (with its dashboard owner, when given), and the webhook signing secret every account has from the start. */
export async function createAccount(
  db: Kysely<Database>,
  now: number,
  owner?: AccountOwner,
): Promise<Account> {
  const account = { id: newId('acct'), createdAt: now, email: owner?.email ?? null };
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('accounts')
      .values({
        id: account.id,
        created_at: now,
        email: account.email,
        password_hash: owner?.passwordHash ?? null,
      })
      .execute();
    await trx
      .insertInto('webhook_secrets')
      .values({ secret: newWebhookSecret(), account_id: account.id, created_at: now, expires_at: null })
      .execute();
  });
  return account;
}

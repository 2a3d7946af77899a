import type { Kysely } from 'kysely';
import type { AccountOwner } from '../../ports/store.js';
import type { Database } from '../database-schema.js';

/**
 * Gives an account without an owner (one made for keys only, such as the first account `serve` makes) its
 * dashboard owner; false when the account has an owner already or does not exist, or the email is taken.
 */
export async function setAccountOwner(
  db: Kysely<Database>,
  accountId: string,
  owner: AccountOwner,
): Promise<boolean> {
  const taken = await db
    .selectFrom('accounts')
    .select('id')
    .where('email', '=', owner.email)
    .executeTakeFirst();
  if (taken) return false;
  const result = await db
    .updateTable('accounts')
    .set({ email: owner.email, password_hash: owner.passwordHash })
    .where('id', '=', accountId)
    .where('email', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

import type { Kysely } from 'kysely';
import type { Account, AccountOwner } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { createAccount } from './create-account.js';

/** An account with an owner who signs in to the dashboard; undefined when the email already has one. */
export async function createOwnedAccount(
  db: Kysely<Database>,
  owner: AccountOwner,
  now: number,
): Promise<Account | undefined> {
  const taken = await db
    .selectFrom('accounts')
    .select('id')
    .where('email', '=', owner.email)
    .executeTakeFirst();
  if (taken) return undefined;
  // The unique index on email is the backstop for a race between two creations.
  return createAccount(db, now, owner);
}

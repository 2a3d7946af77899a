import type { Kysely } from 'kysely';
import { newId } from '../../domain/identifiers.js';
import type { Account } from '../../ports/store.js';
import type { Database } from '../database-schema.js';

export async function createAccount(db: Kysely<Database>, now: number): Promise<Account> {
  const account = { id: newId('acct'), createdAt: now };
  await db.insertInto('accounts').values({ id: account.id, created_at: now }).execute();
  return account;
}

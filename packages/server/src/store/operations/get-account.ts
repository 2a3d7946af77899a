import type { Kysely } from 'kysely';
import type { Account } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { toAccount } from '../task-row.js';

export async function getAccount(db: Kysely<Database>, id: string): Promise<Account | undefined> {
  const row = await db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toAccount(row);
}

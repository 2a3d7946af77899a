import type { Kysely } from 'kysely';
import type { OwnerCredentials } from '../../ports/store.js';
import type { Database } from '../database-schema.js';

export async function findAccountOwner(
  db: Kysely<Database>,
  email: string,
): Promise<OwnerCredentials | undefined> {
  const row = await db
    .selectFrom('accounts')
    .select(['id', 'email', 'password_hash'])
    .where('email', '=', email)
    .executeTakeFirst();
  if (!row?.email || !row.password_hash) return undefined;
  return { accountId: row.id, email: row.email, passwordHash: row.password_hash };
}

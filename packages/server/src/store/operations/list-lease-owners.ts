import type { Kysely } from 'kysely';
import type { Database } from '../database-schema.js';

/** The worker pools that hold processing tasks. */
export async function listLeaseOwners(db: Kysely<Database>): Promise<string[]> {
  const rows = await db
    .selectFrom('tasks')
    .select('lease_owner')
    .distinct()
    .where('status', '=', 'processing')
    .where('lease_owner', 'is not', null)
    .execute();
  return rows.flatMap((row) => (row.lease_owner ? [row.lease_owner] : []));
}

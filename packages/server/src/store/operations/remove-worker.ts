import type { Kysely } from 'kysely';
import type { Database } from '../database-schema.js';

/** Forgets a worker pool that stopped. */
export async function removeWorker(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom('workers').where('id', '=', id).execute();
}

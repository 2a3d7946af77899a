import type { Kysely } from 'kysely';
import type { Database } from '../database-schema.js';

export async function deleteSession(db: Kysely<Database>, tokenHash: string): Promise<void> {
  await db.deleteFrom('dashboard_sessions').where('token_hash', '=', tokenHash).execute();
}

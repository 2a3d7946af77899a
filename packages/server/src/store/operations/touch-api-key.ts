import type { Kysely } from 'kysely';
import type { Database } from '../database-schema.js';

export async function touchApiKey(db: Kysely<Database>, id: string, at: number): Promise<void> {
  await db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
}

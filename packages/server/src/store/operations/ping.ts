import { type Kysely, sql } from 'kysely';
import type { Database } from '../database-schema.js';

export async function ping(db: Kysely<Database>): Promise<void> {
  await sql`select 1`.execute(db);
}

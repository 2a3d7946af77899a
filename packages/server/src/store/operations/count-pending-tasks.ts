import type { Kysely } from 'kysely';
import type { Database } from '../database-schema.js';

export async function countPendingTasks(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('tasks')
    .select((eb) => eb.fn.countAll().as('count'))
    .where('status', '=', 'pending')
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

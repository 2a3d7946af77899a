import type { Kysely } from 'kysely';
import type { Database } from '../database-schema.js';
import { isOneOf } from '../list-parameters.js';

/** Deletes the reservations of tasks that failed or were cancelled: a failed task costs nothing. */
export async function releaseUsage(trx: Kysely<Database>, taskIds: readonly string[]): Promise<void> {
  if (taskIds.length === 0) return;
  await trx
    .deleteFrom('usage_records')
    .where((eb) => isOneOf(trx, eb.ref('task_id'), taskIds))
    .where('state', '=', 'reserved')
    .execute();
}

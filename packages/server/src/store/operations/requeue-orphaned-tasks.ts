import type { Kysely } from 'kysely';
import type { Database } from '../database-schema.js';
import { isOneOf } from '../list-parameters.js';
import { handedBack } from './handed-back.js';

/**
 * Puts back to `pending` the tasks of worker pools known to be gone (`goneWorkers`), without counting the
 * attempt (a crash is not the task's fault), and forgets those pools.
 */
export async function requeueOrphanedTasks(
  db: Kysely<Database>,
  goneWorkers: readonly string[],
  now: number,
): Promise<number> {
  if (goneWorkers.length === 0) return 0;
  const owners = [...new Set(goneWorkers)];
  return db.transaction().execute(async (trx) => {
    const requeued = await trx
      .updateTable('tasks')
      .set(handedBack(now))
      .where('status', '=', 'processing')
      .where((eb) => isOneOf(trx, eb.ref('lease_owner'), owners))
      .executeTakeFirst();
    await trx
      .deleteFrom('workers')
      .where((eb) => isOneOf(trx, eb.ref('id'), owners))
      .execute();
    return Number(requeued.numUpdatedRows);
  });
}

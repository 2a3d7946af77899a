import { type Kysely, sql } from 'kysely';
import type { Database } from '../database-schema.js';
import { isOneOf } from '../list-parameters.js';
import { WORKER_LOCK_CLASS } from '../worker-lock-class.js';
import { handedBack } from './handed-back.js';

/**
 * Puts back to `pending` the tasks of worker pools known to be gone, without counting the attempt (a crash is
 * not the task's fault), and forgets those pools: the pools of `goneWorkers`, and, with `sessions`
 * (PostgreSQL), every registered pool whose worker lock (pg-worker-lock.ts) no session holds. Only registered
 * pools are judged by their lock, so a pool of a version that takes none is left to its lease.
 */
export async function requeueOrphanedTasks(
  db: Kysely<Database>,
  goneWorkers: readonly string[],
  sessions: boolean,
  now: number,
): Promise<number> {
  const dead = new Set(goneWorkers);
  if (sessions) {
    const lockless = await db
      .selectFrom('workers')
      .select('id')
      .where(
        sql<boolean>`not exists (
          select 1 from pg_locks l
          where l.locktype = 'advisory' and l.granted and l.objsubid = 2
            and l.database = (select oid from pg_database where datname = current_database())
            and l.classid = ${sql.lit(WORKER_LOCK_CLASS)}::oid
            and l.objid = hashtext(current_schema() || ':' || workers.id)::oid)`,
      )
      .execute();
    for (const { id } of lockless) dead.add(id);
  }
  if (dead.size === 0) return 0;
  const owners = [...dead];
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

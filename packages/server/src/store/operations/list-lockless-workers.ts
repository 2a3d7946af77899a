import { type Kysely, sql } from 'kysely';
import type { Database } from '../database-schema.js';
import { WORKER_LOCK_CLASS } from '../worker-lock-class.js';

/** PostgreSQL: the registered worker pools whose worker lock (pg-worker-lock.ts) no session holds now. */
export async function listLocklessWorkers(db: Kysely<Database>): Promise<string[]> {
  const rows = await db
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
  return rows.map((row) => row.id);
}

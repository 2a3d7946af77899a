import type { Kysely } from 'kysely';
import type { UpstreamJob } from '../../domain/upstream-job.js';
import type { EndedUpstreamJob } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { isOneOf } from '../list-parameters.js';

/**
 * Takes up to `limit` upstream jobs of failed tasks (cancelled, timed out, out of workers or failed otherwise)
 * that ran on one of `engines`, clearing them from their tasks in the same transaction: each is handed to one
 * worker once, to cancel upstream. On PostgreSQL rows another worker is taking are skipped.
 */
export async function takeEndedUpstreamJobs(
  db: Kysely<Database>,
  engines: readonly string[],
  limit: number,
  skipLocked: boolean,
): Promise<EndedUpstreamJob[]> {
  if (engines.length === 0) return [];
  return db.transaction().execute(async (trx) => {
    let query = trx
      .selectFrom('tasks')
      .select(['id', 'upstream_job'])
      .where('upstream_job', 'is not', null)
      .where('status', '=', 'failed')
      .where((eb) => isOneOf(trx, eb.ref('engine'), engines))
      .limit(limit);
    if (skipLocked) query = query.forUpdate().skipLocked();
    const rows = await query.execute();
    if (rows.length === 0) return [];
    const ids = rows.map((row) => row.id);
    await trx
      .updateTable('tasks')
      .set((eb) => ({ upstream_job: eb.val(null) }))
      .where((eb) => isOneOf(trx, eb.ref('id'), ids))
      .execute();
    return rows.map((row) => ({
      taskId: row.id,
      job: JSON.parse(row.upstream_job ?? 'null') as UpstreamJob,
    }));
  });
}

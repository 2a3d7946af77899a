import type { Kysely } from 'kysely';
import type { UpstreamJob } from '../../domain/upstream-job.js';
import type { EndedUpstreamJob } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { isOneOf } from '../list-parameters.js';

/**
 * Takes up to `limit` upstream jobs of failed tasks (cancelled, timed out, out of workers or failed otherwise)
 * that ran on one of `engines`, clearing them from their tasks in the same transaction: each is handed to one
 * worker once, to cancel upstream. Jobs of such tasks deleted before that (delete-task-rows.ts) are taken too.
 * On PostgreSQL rows another worker is taking are skipped.
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
    if (rows.length > 0) {
      await trx
        .updateTable('tasks')
        .set((eb) => ({ upstream_job: eb.val(null), upstream_job_id: eb.val(null) }))
        .where((eb) =>
          isOneOf(
            trx,
            eb.ref('id'),
            rows.map((row) => row.id),
          ),
        )
        .execute();
    }
    const left = limit - rows.length;
    let deleted: { task_id: string; upstream_job: string }[] = [];
    if (left > 0) {
      let deletedQuery = trx
        .selectFrom('deleted_task_upstream_jobs')
        .select(['task_id', 'upstream_job'])
        .where((eb) => isOneOf(trx, eb.ref('engine'), engines))
        .limit(left);
      if (skipLocked) deletedQuery = deletedQuery.forUpdate().skipLocked();
      deleted = await deletedQuery.execute();
      if (deleted.length > 0) {
        await trx
          .deleteFrom('deleted_task_upstream_jobs')
          .where((eb) =>
            isOneOf(
              trx,
              eb.ref('task_id'),
              deleted.map((row) => row.task_id),
            ),
          )
          .execute();
      }
    }
    return [
      ...rows.map((row) => ({ taskId: row.id, job: JSON.parse(row.upstream_job ?? 'null') as UpstreamJob })),
      ...deleted.map((row) => ({ taskId: row.task_id, job: JSON.parse(row.upstream_job) as UpstreamJob })),
    ];
  });
}

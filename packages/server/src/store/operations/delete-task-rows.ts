import type { Kysely } from 'kysely';
import type { Database } from '../database-schema.js';
import { isOneOf } from '../list-parameters.js';

/**
 * Deletes final tasks `ids` with what refers to them: callback attempts, deliveries and idempotency keys. A
 * failed task's upstream job that no worker has taken to cancel yet moves to `deleted_task_upstream_jobs`
 * (migration 0015), where one still will. Runs inside the caller's transaction. The status condition stays on
 * the tasks: only final ones go. The ids are one parameter (list-parameters.ts), however many.
 */
export async function deleteTaskRows(trx: Kysely<Database>, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  const jobs = await trx
    .selectFrom('tasks')
    .select(['id', 'engine', 'upstream_job'])
    .where((eb) => isOneOf(trx, eb.ref('id'), ids))
    .where('status', '=', 'failed')
    .where('upstream_job', 'is not', null)
    .execute();
  const deletedAt = Date.now();
  const moved = jobs.flatMap(({ id, engine, upstream_job }) =>
    engine !== null && upstream_job !== null
      ? [{ task_id: id, engine, upstream_job, deleted_at: deletedAt }]
      : [],
  );
  if (moved.length > 0) await trx.insertInto('deleted_task_upstream_jobs').values(moved).execute();
  const deliveries = trx
    .selectFrom('webhook_deliveries')
    .select('id')
    .where((eb) => isOneOf(trx, eb.ref('task_id'), ids));
  await trx.deleteFrom('webhook_attempts').where('delivery_id', 'in', deliveries).execute();
  await trx
    .deleteFrom('webhook_deliveries')
    .where((eb) => isOneOf(trx, eb.ref('task_id'), ids))
    .execute();
  await trx
    .deleteFrom('idempotency_keys')
    .where((eb) => isOneOf(trx, eb.ref('task_id'), ids))
    .execute();
  await trx
    .deleteFrom('tasks')
    .where((eb) => isOneOf(trx, eb.ref('id'), ids))
    .where('status', 'in', ['completed', 'failed'])
    .execute();
}

import type { Kysely } from 'kysely';
import type { TaskRecord, TaskScope } from '../../domain/task.js';
import type { CancelOutcome } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { toTaskRecord } from '../task-row.js';
import { enqueueDeliveries } from './enqueue-deliveries.js';
import { getTask } from './get-task.js';
import { releaseUsage } from './release-usage.js';

export const CANCELLED_MESSAGE = 'The task was cancelled.';

/**
 * Fails a pending or processing task with `cancelled`, releasing its lease (the worker's later writes no
 * longer match its fence) and queueing its callback in the same transaction. A final task is left as it is.
 */
export async function cancelTask(
  db: Kysely<Database>,
  id: string,
  scope: TaskScope,
  now: number,
): Promise<CancelOutcome | undefined> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable('tasks')
      .set((eb) => ({
        status: 'failed',
        error_code: 'cancelled',
        error_message: CANCELLED_MESSAGE,
        lease_owner: null,
        lease_expires_at: null,
        revision: eb('revision', '+', 1),
        updated_at: now,
        completed_at: now,
      }))
      .where('id', '=', id)
      .where('account_id', '=', scope.accountId)
      .where('environment', '=', scope.environment)
      .where('status', 'in', ['pending', 'processing'])
      .returningAll()
      .executeTakeFirst();
    if (row) {
      await enqueueDeliveries(trx, [row], now);
      await releaseUsage(trx, [row.id]);
      return { cancelled: true, task: toTaskRecord(row) };
    }
    const task: TaskRecord | undefined = await getTask(trx, id, scope);
    return task && { cancelled: false, task };
  });
}

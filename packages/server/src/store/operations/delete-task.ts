import type { Kysely } from 'kysely';
import type { TaskScope } from '../../domain/task.js';
import type { DeleteOutcome } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { toTaskRecord } from '../task-row.js';
import { deleteTaskRows } from './delete-task-rows.js';

/**
 * Deletes a final task with its callback deliveries and their attempts (pending callbacks are dropped with
 * it) and the idempotency key that made it. A task still pending or processing is left alone and returned as such.
 */
export async function deleteTask(
  db: Kysely<Database>,
  id: string,
  scope: TaskScope,
): Promise<DeleteOutcome | undefined> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .selectFrom('tasks')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', scope.accountId)
      .where('environment', '=', scope.environment)
      .executeTakeFirst();
    if (!row) return undefined;
    const task = toTaskRecord(row);
    if (task.status !== 'completed' && task.status !== 'failed') return { deleted: false, task };
    await deleteTaskRows(trx, [id]);
    return { deleted: true, task };
  });
}

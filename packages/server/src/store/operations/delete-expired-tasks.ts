import type { Kysely } from 'kysely';
import type { TaskRecord } from '../../domain/task.js';
import type { Database } from '../database-schema.js';
import { toTaskRecord } from '../task-row.js';
import { deleteTaskRows } from './delete-task-rows.js';

/**
 * Deletes up to `limit` final tasks that ended before `completedBefore`, oldest first, with their callback
 * logs and idempotency keys, and returns them (their files are the caller's to delete).
 */
export async function deleteExpiredTasks(
  db: Kysely<Database>,
  completedBefore: number,
  limit: number,
): Promise<TaskRecord[]> {
  return db.transaction().execute(async (trx) => {
    const rows = await trx
      .selectFrom('tasks')
      .selectAll()
      .where('status', 'in', ['completed', 'failed'])
      .where('completed_at', '<', completedBefore)
      .orderBy('completed_at')
      .limit(limit)
      .execute();
    await deleteTaskRows(
      trx,
      rows.map((row) => row.id),
    );
    return rows.map(toTaskRecord);
  });
}

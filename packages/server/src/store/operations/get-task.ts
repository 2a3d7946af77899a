import type { Kysely } from 'kysely';
import type { TaskRecord, TaskScope } from '../../domain/task.js';
import type { Database } from '../database-schema.js';
import { toTaskRecord } from '../task-row.js';

export async function getTask(
  db: Kysely<Database>,
  id: string,
  scope?: TaskScope,
): Promise<TaskRecord | undefined> {
  let query = db.selectFrom('tasks').selectAll().where('id', '=', id);
  if (scope) {
    query = query.where('account_id', '=', scope.accountId).where('environment', '=', scope.environment);
  }
  const row = await query.executeTakeFirst();
  return row && toTaskRecord(row);
}

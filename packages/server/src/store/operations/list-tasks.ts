import type { Kysely } from 'kysely';
import type { TaskScope } from '../../domain/task.js';
import type { TaskList, TaskListQuery } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { toTaskRecord } from '../task-row.js';

/**
 * One page of a scope's tasks, newest first (creation time, then id), after the `after` position when given:
 * keyset pagination, so pages stay consistent while tasks are created and the cost does not grow with depth.
 */
export async function listTasks(
  db: Kysely<Database>,
  scope: TaskScope,
  query: TaskListQuery,
): Promise<TaskList> {
  let select = db
    .selectFrom('tasks')
    .selectAll()
    .where('account_id', '=', scope.accountId)
    .where('environment', '=', scope.environment);
  if (query.status) select = select.where('status', '=', query.status);
  if (query.model) select = select.where('model', '=', query.model);
  if (query.createdAfter !== undefined) select = select.where('created_at', '>=', query.createdAfter);
  if (query.createdBefore !== undefined) select = select.where('created_at', '<', query.createdBefore);
  const { after } = query;
  if (after) {
    select = select.where((eb) =>
      eb.or([
        eb('created_at', '<', after.createdAt),
        eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)]),
      ]),
    );
  }
  const rows = await select
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(query.limit + 1)
    .execute();
  return { tasks: rows.slice(0, query.limit).map(toTaskRecord), hasMore: rows.length > query.limit };
}

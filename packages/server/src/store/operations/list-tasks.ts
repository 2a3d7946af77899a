import type { Kysely, Selectable, SelectQueryBuilder } from 'kysely';
import type { TaskScope } from '../../domain/task.js';
import type { TaskList, TaskListQuery } from '../../ports/store.js';
import type { Database, TasksTable } from '../database-schema.js';
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
  const rows = await taskPageQuery(db, scope, query).execute();
  return { tasks: rows.slice(0, query.limit).map(toTaskRecord), hasMore: rows.length > query.limit };
}

/** The page's statement, one more row than the page to tell whether more follow; the tests read its plan. */
export function taskPageQuery(
  db: Kysely<Database>,
  scope: TaskScope,
  query: TaskListQuery,
): SelectQueryBuilder<Database, 'tasks', Selectable<TasksTable>> {
  let select = db
    .selectFrom('tasks')
    .selectAll()
    .where('account_id', '=', scope.accountId)
    .where('environment', '=', scope.environment);
  if (query.status) select = select.where('status', '=', query.status);
  if (query.model) select = select.where('model', '=', query.model);
  if (query.createdAfter !== undefined) select = select.where('created_at', '>=', query.createdAfter);
  const { after, createdBefore } = query;
  // One upper bound, whichever is tighter (it implies the other): given both, a planner may take the looser for
  // its range and filter on the other, reading every task in between. As a row value, the cursor is one index
  // range (tasks_list*, migration 0011) on SQLite and PostgreSQL alike, where `a < x OR (a = x AND id < y)` is not.
  if (after && (createdBefore === undefined || after.createdAt < createdBefore)) {
    select = select.where((eb) =>
      eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(after.createdAt, after.id)),
    );
  } else if (createdBefore !== undefined) {
    select = select.where('created_at', '<', createdBefore);
  }
  return select
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(query.limit + 1);
}

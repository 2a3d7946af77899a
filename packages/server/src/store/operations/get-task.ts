import type { Kysely } from 'kysely';
import type { Environment, TaskRecord, TaskScope } from '../../domain/task.js';
import type { Database } from '../database-schema.js';
import { type Placeholder, preparedQuery } from '../prepared-query.js';
import type { SqliteReader } from '../sqlite/sqlite-reader.js';
import { toTaskRecord } from '../task-row.js';
import { TASK_COLUMN_NAMES } from './create-task.js';

// Polling reads a task on every request: the statement is compiled once (prepared-query.ts), and on PostgreSQL
// planned once per connection (its columns listed, as a named statement's must be).
const taskById = preparedQuery(
  (db, value: Placeholder<'id'>) =>
    db.selectFrom('tasks').select(TASK_COLUMN_NAMES).where('id', '=', value<string>('id')),
  { named: true },
);

const taskInScope = preparedQuery(
  (db, value: Placeholder<'id' | 'accountId' | 'environment'>) =>
    db
      .selectFrom('tasks')
      .select(TASK_COLUMN_NAMES)
      .where('id', '=', value<string>('id'))
      .where('account_id', '=', value<string>('accountId'))
      .where('environment', '=', value<Environment>('environment')),
  { named: true },
);

/** `getTask` on the SQLite store's reading connection, at once (sqlite/sqlite-reader.ts). */
export function readTask(reader: SqliteReader, id: string, scope?: TaskScope): TaskRecord | undefined {
  const [row] = scope
    ? reader.all(taskInScope, { id, accountId: scope.accountId, environment: scope.environment })
    : reader.all(taskById, { id });
  return row && toTaskRecord(row);
}

export async function getTask(
  db: Kysely<Database>,
  id: string,
  scope?: TaskScope,
): Promise<TaskRecord | undefined> {
  const [row] = scope
    ? await taskInScope(db, { id, accountId: scope.accountId, environment: scope.environment })
    : await taskById(db, { id });
  return row && toTaskRecord(row);
}

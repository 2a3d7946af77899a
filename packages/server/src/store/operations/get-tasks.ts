import type { Kysely } from 'kysely';
import type { TaskRecord } from '../../domain/task.js';
import type { Database } from '../database-schema.js';
import { isOneOfList, listParameter } from '../list-parameters.js';
import { type Placeholder, preparedQuery } from '../prepared-query.js';
import type { SqliteReader } from '../sqlite/sqlite-reader.js';
import { toTaskRecord } from '../task-row.js';
import { TASK_COLUMN_NAMES } from './create-task.js';

// Reads of many tasks by id at once (pg-task-reads.ts): one statement whatever their number, the ids one list
// parameter, planned once per connection.
const tasksByIds = preparedQuery(
  (db, value: Placeholder<'ids'>) =>
    db
      .selectFrom('tasks')
      .select(TASK_COLUMN_NAMES)
      .where((eb) => isOneOfList(db, eb.ref('id'), value('ids'))),
  { named: true },
);

/** The tasks of `ids` that exist, by id. */
export async function getTasks(
  db: Kysely<Database>,
  ids: readonly string[],
): Promise<Map<string, TaskRecord>> {
  const rows = await tasksByIds(db, { ids: listParameter(db, ids) });
  return new Map(rows.map((row) => [row.id, toTaskRecord(row)]));
}

/** `getTasks` on the SQLite store's reading connection, at once (sqlite/sqlite-reader.ts). */
export function readTasks(reader: SqliteReader, ids: readonly string[]): Map<string, TaskRecord> {
  // SQLite's list parameter is JSON text (list-parameters.ts).
  const rows = reader.all(tasksByIds, { ids: JSON.stringify(ids) });
  return new Map(rows.map((row) => [row.id, toTaskRecord(row)]));
}

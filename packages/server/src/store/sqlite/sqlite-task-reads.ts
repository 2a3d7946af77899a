import type { Kysely } from 'kysely';
import type { Database } from '../database-schema.js';
import { readTask } from '../operations/get-task.js';
import { readTasks } from '../operations/get-tasks.js';
import { directTaskReads, type TaskReads } from '../task-reads.js';
import type { SqliteReader } from './sqlite-reader.js';

/**
 * Task reads on SQLite: on the reading connection of a file (sqlite-reader.ts), at once and beside the writes;
 * in memory, where a second connection would see another database, on the store's one connection.
 */
export function sqliteTaskReads(db: Kysely<Database>, reader: SqliteReader | undefined): TaskReads {
  if (!reader) return directTaskReads(db);
  return {
    getTask: async (id, scope) => readTask(reader, id, scope),
    getTasks: async (ids) => readTasks(reader, ids),
    drain: async () => {},
  };
}

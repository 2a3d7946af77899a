import type { Kysely } from 'kysely';
import type { TaskRecord, TaskScope } from '../domain/task.js';
import type { Database } from './database-schema.js';
import { getTask } from './operations/get-task.js';
import { getTasks } from './operations/get-tasks.js';

/**
 * How a store's database reads tasks by id, polls above all: each dialect's fastest way (pg/pg-task-reads.ts,
 * sqlite/sqlite-task-reads.ts), or the operations themselves on the store's connection.
 */
export interface TaskReads {
  getTask(id: string, scope?: TaskScope): Promise<TaskRecord | undefined>;
  getTasks(ids: readonly string[]): Promise<Map<string, TaskRecord>>;
  /** Resolves once every read asked for so far has been answered. */
  drain(): Promise<void>;
}

/** The operations run one by one on `db`. */
export function directTaskReads(db: Kysely<Database>): TaskReads {
  return {
    getTask: (id, scope) => getTask(db, id, scope),
    getTasks: (ids) => getTasks(db, ids),
    drain: async () => {},
  };
}

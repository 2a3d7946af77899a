/**
 * Task reads on PostgreSQL (polls, above all), grouped as they arrive (statement-groups.ts: the reads of one
 * turn of the event loop, and those arriving while a group is read, go in one group): a group of several is one
 * statement (operations/get-tasks.ts), the scope of each checked here as its own statement's `where` would. On
 * PostgreSQL each statement costs a round trip and the driver's work per query; one read alone is the one-row
 * statement (operations/get-task.ts).
 */
import type { Kysely } from 'kysely';
import type { TaskRecord, TaskScope } from '../../domain/task.js';
import type { Database } from '../database-schema.js';
import { getTask } from '../operations/get-task.js';
import { getTasks } from '../operations/get-tasks.js';
import { StatementGroups } from '../statement-groups.js';
import type { TaskReads } from '../task-reads.js';

interface TaskRead {
  readonly id: string;
  /** Only a task of this scope; any task when absent (workers). */
  readonly scope?: TaskScope;
}

const inScope = (task: TaskRecord, scope: TaskScope | undefined): boolean =>
  scope === undefined || (task.accountId === scope.accountId && task.environment === scope.environment);

export function pgTaskReads(db: Kysely<Database>): TaskReads {
  const groups = new StatementGroups<TaskRead, TaskRecord | undefined>(async (reads) => {
    const [only] = reads;
    if (reads.length === 1 && only) {
      return [{ ok: true, result: await getTask(db, only.id, only.scope) }];
    }
    const tasks = await getTasks(db, [...new Set(reads.map((read) => read.id))]);
    return reads.map(({ id, scope }) => {
      const task = tasks.get(id);
      return { ok: true, result: task && inScope(task, scope) ? task : undefined };
    });
  });
  return {
    getTask: (id, scope) => groups.submit(scope ? { id, scope } : { id }),
    getTasks: (ids) => getTasks(db, ids),
    drain: () => groups.drain(),
  };
}

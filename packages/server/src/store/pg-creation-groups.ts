/**
 * Creations on PostgreSQL, grouped as they arrive (statement-groups.ts): a group of several is one statement
 * (operations/create-unlimited-tasks.ts), which cost a third to a quarter of the time per task of one statement
 * each with 20 creations at a time here, mostly PostgreSQL's own work per statement and per commit on the same
 * 2 cores. A creation alone is the one-row statement (create-unlimited-task.ts).
 *
 * A group's statement that fails creates nothing, so each of its creations is then tried alone: the one that
 * caused the error (a duplicate id, a text PostgreSQL refuses) gets it, the others are created. A creation the
 * statement leaves out (a monthly limit applies) is answered `undefined`, for the transaction that checks
 * limits.
 */
import type { Kysely } from 'kysely';
import type { TaskRecord } from '../domain/task.js';
import type { NewTask } from '../ports/store.js';
import type { Database } from './database-schema.js';
import { createUnlimitedTask } from './operations/create-unlimited-task.js';
import { createUnlimitedTasks } from './operations/create-unlimited-tasks.js';
import { type Settled, StatementGroups } from './statement-groups.js';

export interface Creation {
  readonly task: NewTask;
  /** When it was asked for: its rows' times. */
  readonly now: number;
}

export function pgCreationGroups(db: Kysely<Database>): StatementGroups<Creation, TaskRecord | undefined> {
  const alone = (creation: Creation): Promise<Settled<TaskRecord | undefined>> =>
    createUnlimitedTask(db, creation.task, creation.now).then(
      (result) => ({ ok: true, result }),
      (error: unknown) => ({ ok: false, error }),
    );
  return new StatementGroups(async (creations) => {
    if (creations.length === 1) return Promise.all(creations.map(alone));
    let created: Map<string, TaskRecord>;
    try {
      created = await createUnlimitedTasks(db, creations);
    } catch {
      return Promise.all(creations.map(alone));
    }
    return creations.map(({ task }) => ({ ok: true, result: created.get(task.id) }));
  });
}

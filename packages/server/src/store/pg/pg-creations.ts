/**
 * Creations on PostgreSQL, grouped as they arrive (statement-groups.ts): a group, or a creation alone, is one
 * statement (pg-create-tasks.ts). A group of several cost a third to a quarter of the time per task of one
 * statement each with 20 creations at a time here, mostly PostgreSQL's own work per statement and per commit on
 * the same 2 cores.
 *
 * A group's statement that fails creates nothing, so each of its creations is then tried alone: the one that
 * caused the error (a duplicate id, a text PostgreSQL refuses) gets it, the others are created. A creation the
 * statement leaves out (a monthly limit applies, its key has a row) then runs in the transaction that checks
 * limits and sorts keys out, outside the group, which goes on meanwhile.
 */
import type { Kysely } from 'kysely';
import type { TaskRecord } from '../../domain/task.js';
import type { IdempotentCreation } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { type Creation, createTask } from '../operations/create-task.js';
import { type Settled, StatementGroups } from '../statement-groups.js';
import type { TaskCreations } from '../task-creations.js';
import { createTasksInOneStatement } from './pg-create-tasks.js';

export function pgCreations(db: Kysely<Database>): TaskCreations {
  const alone = (creation: Creation): Promise<Settled<TaskRecord | undefined>> =>
    createTasksInOneStatement(db, [creation]).then(
      (created) => ({ ok: true, result: created.get(creation.task.id) }),
      (error: unknown) => ({ ok: false, error }),
    );
  const groups = new StatementGroups<Creation, TaskRecord | undefined>(async (creations) => {
    if (creations.length === 1) return Promise.all(creations.map(alone));
    let created: Map<string, TaskRecord>;
    try {
      created = await createTasksInOneStatement(db, creations);
    } catch {
      return Promise.all(creations.map(alone));
    }
    return creations.map(({ task }) => ({ ok: true, result: created.get(task.id) }));
  });
  return {
    async create(creation: Creation): Promise<IdempotentCreation> {
      const task = await groups.submit(creation);
      if (task) return { outcome: 'created', task };
      return db.transaction().execute((trx) => createTask(trx, creation, true));
    },
    drain: () => groups.drain(),
  };
}

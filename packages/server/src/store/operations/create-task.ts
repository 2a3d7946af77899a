import type { Kysely } from 'kysely';
import type { TaskRecord } from '../../domain/task.js';
import type { NewTask } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { toTaskRecord, toTaskRow } from '../task-row.js';
import { reserveUsage } from './reserve-usage.js';

export function createTask(
  db: Kysely<Database>,
  task: NewTask,
  now: number,
  lockRows: boolean,
): Promise<TaskRecord> {
  return db.transaction().execute((trx) => insertTask(trx, task, now, lockRows));
}

/** The task's row and its usage reservation, inside the caller's transaction (see `reserveUsage`). */
export async function insertTask(
  trx: Kysely<Database>,
  task: NewTask,
  now: number,
  lockRows: boolean,
): Promise<TaskRecord> {
  await reserveUsage(trx, task, now, lockRows);
  const row = await trx
    .insertInto('tasks')
    .values(toTaskRow(task, now))
    .returningAll()
    .executeTakeFirstOrThrow();
  return toTaskRecord(row);
}

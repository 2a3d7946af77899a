import type { Insertable, Kysely } from 'kysely';
import type { TaskRecord } from '../../domain/task.js';
import type { NewTask } from '../../ports/store.js';
import type { Database, TasksTable } from '../database-schema.js';
import { type Placeholder, placeholderRow, preparedQuery } from '../prepared-query.js';
import { toTaskRecord, toTaskRow } from '../task-row.js';
import { reserveUsage } from './reserve-usage.js';

/** Every column of a task: the placeholders of its prepared `INSERT`s. */
export const TASK_COLUMNS = {
  id: true,
  account_id: true,
  environment: true,
  model: true,
  status: true,
  progress: true,
  revision: true,
  params: true,
  callback_url: true,
  error_code: true,
  error_message: true,
  result_key: true,
  attempts: true,
  lease_owner: true,
  lease_expires_at: true,
  created_at: true,
  updated_at: true,
  completed_at: true,
  engine: true,
  api_key_id: true,
  upstream_job_id: true,
  upstream_job: true,
  started_at: true,
  cost: true,
} as const satisfies Record<keyof TasksTable, true>;

/** Every column, for a `RETURNING` that must not be `*` (a named statement's, pg-named-statements.ts). */
export const TASK_COLUMN_NAMES = Object.keys(TASK_COLUMNS) as (keyof TasksTable)[];

// Creation's statements are compiled once (prepared-query.ts). Without `returning`: every column is written from
// the row in hand, and having SQLite hand it back cost 10-20 % of a creation's time in the store.
export const insertTaskRow = preparedQuery((db, value: Placeholder<keyof TasksTable>) =>
  db.insertInto('tasks').values(placeholderRow<Insertable<TasksTable>>(TASK_COLUMNS, value)),
);

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
  const row = toTaskRow(task, now);
  await insertTaskRow(trx, row);
  return toTaskRecord(row);
}

import type { Insertable, Kysely } from 'kysely';
import type { TaskRecord } from '../../domain/task.js';
import type { IdempotentCreation, NewTask } from '../../ports/store.js';
import type { Database, IdempotencyKeysTable, TasksTable } from '../database-schema.js';
import { type Placeholder, placeholderRow, preparedQuery } from '../prepared-query.js';
import { millis, toTaskRecord, toTaskRow } from '../task-row.js';
import { reserveUsage } from './reserve-usage.js';

/** An idempotency key of the task's scope, and since when (epoch ms) a row of it counts. */
export interface IdempotencyKey {
  readonly key: string;
  readonly requestHash: string;
  readonly since: number;
}

/** One task to create: what every way of creating tasks takes (this module, pg/ and sqlite/). */
export interface Creation {
  readonly task: NewTask;
  readonly idempotency?: IdempotencyKey;
  /** When it was asked for: its rows' times. */
  readonly now: number;
}

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

/** Every column, for a `RETURNING` that must not be `*` (a named statement's, pg/pg-named-statements.ts). */
export const TASK_COLUMN_NAMES = Object.keys(TASK_COLUMNS) as (keyof TasksTable)[];

// Creation's statements are compiled once (prepared-query.ts). Without `returning`: every column is written from
// the row in hand, and having SQLite hand it back cost 10-20 % of a creation's time in the store.
export const insertTaskRow = preparedQuery((db, value: Placeholder<keyof TasksTable>) =>
  db.insertInto('tasks').values(placeholderRow<Insertable<TasksTable>>(TASK_COLUMNS, value)),
);

/** The row of a creation's idempotency key. */
export function toKeyRow(
  creation: Creation & { idempotency: IdempotencyKey },
): Required<Insertable<IdempotencyKeysTable>> {
  return {
    account_id: creation.task.accountId,
    environment: creation.task.environment,
    key: creation.idempotency.key,
    request_hash: creation.idempotency.requestHash,
    task_id: creation.task.id,
    created_at: creation.now,
  };
}

/**
 * Creates a task inside the caller's transaction, checking the monthly limits (see `reserveUsage`): the way
 * every creation can take, and the one the faster ways (pg/pg-creations.ts, sqlite/sqlite-creations.ts) leave
 * to it what they do not decide alone: a limit that applies, an idempotency key that has a row already.
 *
 * Under a key, the key's row is inserted first (a primary key per scope and key), so of concurrent creations
 * with one key exactly one inserts it and creates its task; the others wait for that commit and read its row.
 * A row older than `since` is an expired key and is replaced; a row whose task was deleted lets the key be used
 * again. A creation refused by a budget (`BudgetExceeded`) rolls the key's row back with it.
 */
export async function createTask(
  trx: Kysely<Database>,
  creation: Creation,
  lockRows: boolean,
): Promise<IdempotentCreation> {
  const { task, idempotency, now } = creation;
  if (!idempotency) return { outcome: 'created', task: await insertTask(trx, task, now, lockRows) };
  const inserted = await trx
    .insertInto('idempotency_keys')
    .values(toKeyRow({ ...creation, idempotency }))
    .onConflict((oc) => oc.columns(['account_id', 'environment', 'key']).doNothing())
    .returning('task_id')
    .executeTakeFirst();
  if (inserted) return { outcome: 'created', task: await insertTask(trx, task, now, lockRows) };

  const existing = await trx
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('account_id', '=', task.accountId)
    .where('environment', '=', task.environment)
    .where('key', '=', idempotency.key)
    .executeTakeFirstOrThrow();
  const made = await trx
    .selectFrom('tasks')
    .selectAll()
    .where('id', '=', existing.task_id)
    .executeTakeFirst();
  if (millis(existing.created_at) < idempotency.since || !made) {
    await trx
      .updateTable('idempotency_keys')
      .set({ request_hash: idempotency.requestHash, task_id: task.id, created_at: now })
      .where('account_id', '=', task.accountId)
      .where('environment', '=', task.environment)
      .where('key', '=', idempotency.key)
      .execute();
    return { outcome: 'created', task: await insertTask(trx, task, now, lockRows) };
  }
  if (existing.request_hash !== idempotency.requestHash) return { outcome: 'conflict' };
  return { outcome: 'replayed', task: toTaskRecord(made) };
}

/** The task's row and its usage reservation, inside the caller's transaction (see `reserveUsage`). */
async function insertTask(
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

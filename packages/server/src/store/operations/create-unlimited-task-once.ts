import type { Insertable, Kysely } from 'kysely';
import type { TaskRecord } from '../../domain/task.js';
import type { NewTask } from '../../ports/store.js';
import type { Database, IdempotencyKeysTable, TasksTable, UsageRecordsTable } from '../database-schema.js';
import { type Placeholder, placeholderSelection, prefixedValues, preparedQuery } from '../prepared-query.js';
import { toTaskRecord } from '../task-row.js';
import { TASK_COLUMN_NAMES, TASK_COLUMNS } from './create-task.js';
import { type CreationValue, creationValues, unlimitedAccount } from './create-unlimited-task.js';
import { USAGE_COLUMNS } from './reserve-usage.js';

const KEY_COLUMNS = {
  account_id: true,
  environment: true,
  key: true,
  request_hash: true,
  task_id: true,
  created_at: true,
} as const satisfies Record<keyof IdempotencyKeysTable, true>;

const createOnceInOneStatement = preparedQuery(
  (db, value: Placeholder<CreationValue | `key.${keyof IdempotencyKeysTable}`>) =>
    db
      .with('unlimited', (qb) => unlimitedAccount(qb, value))
      .with('keyed', (qb) =>
        qb
          .insertInto('idempotency_keys')
          .columns(Object.keys(KEY_COLUMNS) as (keyof IdempotencyKeysTable)[])
          .expression((eb) =>
            eb
              .selectFrom('unlimited')
              .select(
                placeholderSelection<Insertable<IdempotencyKeysTable>, 'key.'>(KEY_COLUMNS, value, 'key.'),
              ),
          )
          .onConflict((oc) => oc.columns(['account_id', 'environment', 'key']).doNothing())
          .returning('task_id'),
      )
      .with('reserved', (qb) =>
        qb
          .insertInto('usage_records')
          .columns(Object.keys(USAGE_COLUMNS) as (keyof UsageRecordsTable)[])
          .expression((eb) =>
            eb
              .selectFrom('keyed')
              .select(
                placeholderSelection<Insertable<UsageRecordsTable>, 'usage.'>(USAGE_COLUMNS, value, 'usage.'),
              ),
          )
          .returning('task_id'),
      )
      .insertInto('tasks')
      .columns(Object.keys(TASK_COLUMNS) as (keyof TasksTable)[])
      .expression((eb) =>
        eb
          .selectFrom('reserved')
          .select(placeholderSelection<Insertable<TasksTable>, 'task.'>(TASK_COLUMNS, value, 'task.')),
      )
      .returning(TASK_COLUMN_NAMES),
  // Planning it took several times as long as running it (pg-named-statements.ts).
  { named: true },
);

/**
 * PostgreSQL only: `createUnlimitedTask` under an idempotency key, in one statement with the key's row, when the
 * key is new to the scope and no monthly limit applies. It inserts nothing and answers `undefined` when the key
 * has a row already (a repeat, a conflict, an expired key or one whose task was deleted) or a limit applies; the
 * caller then runs the transaction (`createTaskOnce`), which sorts those out. Of concurrent creations with one
 * key, the statement that inserts its row first makes the task; the others' inserts wait for its commit, find
 * the row and insert nothing, as the transaction's would. The limits hold as in `createUnlimitedTask`; the
 * statement takes no lock before the key's row, so it waits for locks in the transaction's order (the key's
 * row, then the account's).
 */
export async function createUnlimitedTaskOnce(
  db: Kysely<Database>,
  task: NewTask,
  idempotency: { readonly key: string; readonly requestHash: string },
  now: number,
): Promise<TaskRecord | undefined> {
  const [row] = await createOnceInOneStatement(db, {
    ...creationValues(task, now),
    ...prefixedValues('key.', {
      account_id: task.accountId,
      environment: task.environment,
      key: idempotency.key,
      request_hash: idempotency.requestHash,
      task_id: task.id,
      created_at: now,
    } satisfies Required<Insertable<IdempotencyKeysTable>>),
  });
  return row && toTaskRecord(row);
}

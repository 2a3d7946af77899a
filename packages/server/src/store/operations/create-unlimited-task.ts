import type { Insertable, Kysely, QueryCreator } from 'kysely';
import type { TaskRecord } from '../../domain/task.js';
import type { NewTask } from '../../ports/store.js';
import type { Database, TasksTable, UsageRecordsTable } from '../database-schema.js';
import { type Placeholder, placeholderSelection, prefixedValues, preparedQuery } from '../prepared-query.js';
import { toTaskRecord, toTaskRow, toUsageRow } from '../task-row.js';
import { TASK_COLUMN_NAMES, TASK_COLUMNS } from './create-task.js';
import { USAGE_COLUMNS } from './reserve-usage.js';

/** The placeholders of the statement: the account and key whose limits gate it, then each row's columns. */
export type CreationValue =
  | 'accountId'
  | 'apiKeyId'
  | `task.${keyof TasksTable}`
  | `usage.${keyof UsageRecordsTable}`;

/**
 * The account's row when it exists and neither it nor the API key has a monthly limit (a key id without a row
 * has none, as `reserveUsage` reads it): what gates the inserts of a creation in one statement.
 */
export function unlimitedAccount(db: QueryCreator<Database>, value: Placeholder<'accountId' | 'apiKeyId'>) {
  return db
    .selectFrom('accounts')
    .leftJoin('api_keys', (join) => join.on('api_keys.id', '=', value<string | null>('apiKeyId')))
    .select('accounts.id')
    .where('accounts.id', '=', value<string>('accountId'))
    .where('accounts.monthly_video_seconds', 'is', null)
    .where('accounts.monthly_budget', 'is', null)
    .where('api_keys.monthly_video_seconds', 'is', null)
    .where('api_keys.monthly_budget', 'is', null);
}

const createInOneStatement = preparedQuery(
  (db, value: Placeholder<CreationValue>) =>
    db
      .with('unlimited', (qb) => unlimitedAccount(qb, value))
      .with('reserved', (qb) =>
        qb
          .insertInto('usage_records')
          .columns(Object.keys(USAGE_COLUMNS) as (keyof UsageRecordsTable)[])
          .expression((eb) =>
            eb
              .selectFrom('unlimited')
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

/** The statement's values: the same rows the transaction inserts (`toTaskRow`, `toUsageRow`). */
export function creationValues(task: NewTask, now: number): Record<CreationValue, unknown> {
  return {
    accountId: task.accountId,
    apiKeyId: task.apiKeyId ?? null,
    ...prefixedValues('task.', toTaskRow(task, now)),
    ...prefixedValues('usage.', toUsageRow(task, now)),
  };
}

/**
 * PostgreSQL only (a data-modifying CTE): creates `task` and its usage reservation in one statement, one round
 * trip instead of five, when neither its account nor its API key has a monthly limit, the common case. It
 * inserts nothing and answers `undefined` when a limit applies or no account has the id; the caller then runs
 * the transaction (`createTask`), which checks the limits under the account's lock, or fails as it always did.
 *
 * What the transaction guarantees holds, under READ COMMITTED:
 * - One statement outside a transaction commits alone, both rows or neither, on the store's main pool, whose
 *   commits wait for the WAL to reach disk: a created task survives a crash.
 * - Without a limit the transaction inserts without summing or locking, on the limits its first statement read
 *   from its snapshot; this statement decides on the limits its own snapshot shows, in the same way. A limit
 *   committed after that snapshot does not apply to the creation either way; it applies to every creation that
 *   starts after it committed.
 * - A creation that finds a limit locks the account's row `FOR UPDATE`, then sums the month in a later
 *   statement. Both ways, inserting the task locks that row `FOR KEY SHARE` until the commit (the foreign key's
 *   check, which in this statement runs at its end), and the two locks conflict: a limited creation that locks
 *   after that waits for the commit and counts the reservation. One that locked and summed before did not
 *   count it. That matters only if the two saw different limits for the same holder, that is if a limit was
 *   set meanwhile (a limit on another key counts other usage): the transaction leaves room for that from its
 *   limits read, over two more round trips, to its task insert; this statement only while it runs on the
 *   server.
 */
export async function createUnlimitedTask(
  db: Kysely<Database>,
  task: NewTask,
  now: number,
): Promise<TaskRecord | undefined> {
  const [row] = await createInOneStatement(db, creationValues(task, now));
  return row && toTaskRecord(row);
}

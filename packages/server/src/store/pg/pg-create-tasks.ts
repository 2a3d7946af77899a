import { CompiledQuery, type Kysely } from 'kysely';
import type { TaskRecord } from '../../domain/task.js';
import type { Database } from '../database-schema.js';
import { type Creation, TASK_COLUMN_NAMES, toKeyRow } from '../operations/create-task.js';
import { type TaskRow, toTaskRecord, toTaskRow, toUsageRow } from '../task-row.js';
import { nameStatement } from './pg-named-statements.js';

/**
 * The rows come as three `jsonb` arrays read into the tables' own row types, so the statement's text is the same
 * for any number of tasks: one plan per connection (a named statement: planning it took several times as long
 * as running it, pg-named-statements.ts), whether it creates one task or 200. A task is created when its account
 * exists, neither it nor the API key has a monthly limit, and it has no idempotency key or its key is new to
 * the scope. Keys are inserted in their order, so two statements inserting the same keys wait for each other
 * rather than deadlock.
 */
const STATEMENT = `
with candidates as (
  select t.* from jsonb_populate_recordset(null::tasks, $1::jsonb) t
  where exists (
    select 1 from accounts a left join api_keys k on k.id = t.api_key_id
    where a.id = t.account_id
      and a.monthly_video_seconds is null and a.monthly_budget is null
      and k.monthly_video_seconds is null and k.monthly_budget is null
  )
), requested_keys as (
  select k.* from jsonb_populate_recordset(null::idempotency_keys, $3::jsonb) k
), keyed as (
  insert into idempotency_keys
  select k.* from requested_keys k join candidates c on c.id = k.task_id
  order by k.account_id, k.environment, k.key
  on conflict (account_id, environment, key) do nothing
  returning task_id
), admitted as (
  select c.* from candidates c
  where c.id in (select task_id from keyed)
     or not exists (select 1 from requested_keys k where k.task_id = c.id)
), reserved as (
  insert into usage_records
  select u.* from jsonb_populate_recordset(null::usage_records, $2::jsonb) u
  join admitted c on c.id = u.task_id
  returning task_id
)
insert into tasks
select c.* from admitted c join reserved r on r.task_id = c.id
returning ${TASK_COLUMN_NAMES.join(', ')}`.trim();
nameStatement(STATEMENT);

/**
 * Creates tasks, each with its usage reservation and its idempotency key if it has one, in one statement: one
 * round trip and one commit for them all (a group of creations, pg-creations.ts, or one alone). It answers the
 * tasks it created by id; one it left out (a monthly limit applies, no account has the id, or its key has a row
 * already: a repeat, a conflict, an expired key, one whose task was deleted; or the key came earlier in the group) is
 * for the caller to create in the transaction that checks limits and sorts keys out (operations/create-task.ts).
 * Any error creates none of them.
 *
 * What that transaction guarantees holds row by row, under READ COMMITTED:
 * - One statement outside a transaction commits alone, all its rows or none, on the store's main pool, whose
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
 * - Of concurrent creations with one key, the statement or transaction that inserts its row first makes the
 *   task; the others' inserts wait for its commit, find the row and insert nothing. The statement takes no lock
 *   before the keys' rows, so it waits for locks in the transaction's order (the key's row, then the account's).
 */
export async function createTasksInOneStatement(
  db: Kysely<Database>,
  group: readonly Creation[],
): Promise<Map<string, TaskRecord>> {
  // A key twice in the group: the first to arrive is in the statement, the others are left out and find its row.
  const keysSeen = new Set<string>();
  const creations = group.filter(({ task, idempotency }) => {
    if (!idempotency) return true;
    const scopedKey = JSON.stringify([task.accountId, task.environment, idempotency.key]);
    if (keysSeen.has(scopedKey)) return false;
    keysSeen.add(scopedKey);
    return true;
  });
  const tasks = JSON.stringify(creations.map(({ task, now }) => toTaskRow(task, now)));
  const usage = JSON.stringify(creations.map(({ task, now }) => toUsageRow(task, now)));
  const keys = JSON.stringify(
    creations.flatMap((creation) =>
      creation.idempotency ? [toKeyRow({ ...creation, idempotency: creation.idempotency })] : [],
    ),
  );
  const { rows } = await db.executeQuery<TaskRow>(CompiledQuery.raw(STATEMENT, [tasks, usage, keys]));
  return new Map(rows.map((row) => [row.id, toTaskRecord(row)]));
}

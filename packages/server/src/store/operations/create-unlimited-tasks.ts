import { CompiledQuery, type Kysely } from 'kysely';
import type { TaskRecord } from '../../domain/task.js';
import type { NewTask } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { type TaskRow, toTaskRecord, toTaskRow, toUsageRow } from '../task-row.js';

/**
 * The rows come as two `jsonb` arrays read into the tables' own row types, so the statement's text is the same
 * for any number of tasks (one plan, and nothing for a statement cache to keep per size). A task is created
 * when its account exists and neither it nor the API key has a monthly limit, as in create-unlimited-task.ts.
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
), reserved as (
  insert into usage_records
  select u.* from jsonb_populate_recordset(null::usage_records, $2::jsonb) u
  join candidates c on c.id = u.task_id
  returning task_id
)
insert into tasks
select c.* from candidates c join reserved r on r.task_id = c.id
returning *`.trim();

/**
 * PostgreSQL only: creates several tasks, each with its usage reservation, in one statement, one round trip and
 * one commit for them all; each as create-unlimited-task.ts creates one, whose guarantees hold row by row. It
 * answers the tasks it created by id; one it left out (a monthly limit applies, or no account has the id) is
 * for the caller to create in the transaction that checks the limits. Any error creates none of them.
 */
export async function createUnlimitedTasks(
  db: Kysely<Database>,
  creations: readonly { readonly task: NewTask; readonly now: number }[],
): Promise<Map<string, TaskRecord>> {
  const tasks = JSON.stringify(creations.map(({ task, now }) => toTaskRow(task, now)));
  const usage = JSON.stringify(creations.map(({ task, now }) => toUsageRow(task, now)));
  const { rows } = await db.executeQuery<TaskRow>(CompiledQuery.raw(STATEMENT, [tasks, usage]));
  return new Map(rows.map((row) => [row.id, toTaskRecord(row)]));
}

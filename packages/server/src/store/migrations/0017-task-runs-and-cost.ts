/**
 * What the task object's `task_info` and `usage` need (domain/task-info.ts): when the task's current run began
 * (`started_at`, set at every claim), so that the model's recent run times can be measured from claim to completion
 * (store/operations/recent-run-times.ts), and its cost (`cost`, micro-units, the one its usage record reserved at
 * creation), so that a task reads its own cost without a join on every poll. Tasks that exist already take the cost
 * of their usage record, and have no start: they count in no estimate.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tasks').addColumn('started_at', 'bigint').execute();
  await db.schema.alterTable('tasks').addColumn('cost', 'bigint').execute();
  await sql`update tasks set cost = (select u.cost from usage_records u where u.task_id = tasks.id)`.execute(
    db,
  );
  // Only rows of completed runs: a creation writes no entry, a completion one.
  await db.schema
    .createIndex('tasks_model_runs')
    .on('tasks')
    .columns(['model', 'completed_at'])
    .where(sql.ref('status'), '=', sql.lit('completed'))
    .where(sql.ref('started_at'), 'is not', null)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('tasks_model_runs').execute();
  await db.schema.alterTable('tasks').dropColumn('cost').execute();
  await db.schema.alterTable('tasks').dropColumn('started_at').execute();
}

/**
 * The upstream's id of a task's job (`upstream_job`'s `id`) in a column of its own, indexed, so that a provider's
 * callback, which names the job, finds its task in one look (find-upstream-job-task.ts). Written and cleared with
 * `upstream_job`. Jobs stored before this migration have none: their callbacks find nothing, and their polls go
 * on at their pace.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tasks').addColumn('upstream_job_id', 'text').execute();
  await db.schema
    .createIndex('tasks_upstream_job_id')
    .on('tasks')
    .column('upstream_job_id')
    .where(sql.ref('upstream_job_id'), 'is not', null)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('tasks_upstream_job_id').execute();
  await db.schema.alterTable('tasks').dropColumn('upstream_job_id').execute();
}

/**
 * Upstream jobs of failed tasks that were deleted (by their client, or by retention) before a worker took the job
 * to cancel it (take-ended-upstream-jobs.ts): the delete moves the job here in its transaction, so a deleted
 * task's job is still cancelled upstream once, and nobody pays on for a video whose task is gone.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('deleted_task_upstream_jobs')
    .addColumn('task_id', 'text', (col) => col.primaryKey())
    .addColumn('engine', 'text', (col) => col.notNull())
    // The job's handle, as tasks.upstream_job holds it.
    .addColumn('upstream_job', 'text', (col) => col.notNull())
    .addColumn('deleted_at', 'bigint', (col) => col.notNull())
    .execute();
  await db.schema
    .createIndex('deleted_task_upstream_jobs_engine')
    .on('deleted_task_upstream_jobs')
    .column('engine')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('deleted_task_upstream_jobs').execute();
}

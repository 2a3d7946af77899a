/**
 * The upstream job of a remote engine (domain/upstream-job.ts), as JSON: written when the upstream accepts it and
 * kept through hand-backs and requeues, so the next claim resumes the job rather than submitting it again. A
 * failed task's job is taken by a worker to cancel upstream (take-ended-upstream-jobs.ts); the partial index
 * holds just those, so looking for them reads nothing else.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tasks').addColumn('upstream_job', 'text').execute();
  await db.schema
    .createIndex('tasks_ended_upstream_jobs')
    .on('tasks')
    .column('engine')
    .where(sql.ref('upstream_job'), 'is not', null)
    .where(sql.ref('status'), '=', sql.lit('failed'))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('tasks_ended_upstream_jobs').execute();
  await db.schema.alterTable('tasks').dropColumn('upstream_job').execute();
}

/**
 * The upstream job of a remote engine (domain/upstream-job.ts), as JSON: written when the upstream accepts it and
 * kept through hand-backs and requeues, so the next claim resumes the job rather than submitting it again.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tasks').addColumn('upstream_job', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tasks').dropColumn('upstream_job').execute();
}

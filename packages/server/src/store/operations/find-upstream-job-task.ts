import type { Kysely } from 'kysely';
import type { UpstreamJob } from '../../domain/upstream-job.js';
import type { Database } from '../database-schema.js';

/**
 * The processing task whose stored upstream job is `upstreamId` on `engine`, if any. The id is a provider's, so
 * two engines (two accounts of one provider) could share one: the engine is checked on the job itself, which
 * keeps the engine it was submitted to whatever the task's route says now.
 */
export async function findUpstreamJobTask(
  db: Kysely<Database>,
  engine: string,
  upstreamId: string,
): Promise<string | undefined> {
  const rows = await db
    .selectFrom('tasks')
    .select(['id', 'upstream_job'])
    .where('upstream_job_id', '=', upstreamId)
    .where('status', '=', 'processing')
    .limit(16)
    .execute();
  for (const row of rows) {
    const job = JSON.parse(row.upstream_job ?? 'null') as UpstreamJob | null;
    if (job?.engine === engine) return row.id;
  }
  return undefined;
}

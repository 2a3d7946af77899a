import type { Kysely } from 'kysely';
import type { UpstreamJob } from '../../domain/upstream-job.js';
import type { Claim } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { isCurrentClaim } from './current-claim.js';

/** Stores the job the task's upstream accepted; false when the claim is no longer current. */
export async function recordUpstreamJob(
  db: Kysely<Database>,
  claim: Claim,
  job: UpstreamJob,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('tasks')
    .set((eb) => ({
      upstream_job: eb.val(JSON.stringify(job)),
      upstream_job_id: eb.val(job.id),
      updated_at: eb.val(now),
    }))
    .where((eb) => isCurrentClaim(eb, claim))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

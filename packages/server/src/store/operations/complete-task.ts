import type { Kysely } from 'kysely';
import type { Claim } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { isCurrentClaim } from './current-claim.js';

export async function completeTask(
  db: Kysely<Database>,
  claim: Claim,
  resultKey: string,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('tasks')
    .set({
      status: 'completed',
      progress: 100,
      result_key: resultKey,
      lease_owner: null,
      lease_expires_at: null,
      updated_at: now,
      completed_at: now,
    })
    .where((eb) => isCurrentClaim(eb, claim))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

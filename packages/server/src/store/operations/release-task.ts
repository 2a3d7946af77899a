import type { Kysely } from 'kysely';
import type { Claim } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { isCurrentClaim } from './current-claim.js';

export async function releaseTask(db: Kysely<Database>, claim: Claim, now: number): Promise<boolean> {
  const result = await db
    .updateTable('tasks')
    .set((eb) => ({
      status: 'pending',
      // A release is a graceful hand-back, not a failed attempt.
      attempts: eb('attempts', '-', 1),
      lease_owner: null,
      lease_expires_at: null,
      updated_at: now,
    }))
    .where((eb) => isCurrentClaim(eb, claim))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

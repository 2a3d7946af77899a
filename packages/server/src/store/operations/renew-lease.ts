import type { Kysely } from 'kysely';
import type { Claim } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { isCurrentClaim } from './current-claim.js';

export async function renewLease(
  db: Kysely<Database>,
  claim: Claim,
  leaseMs: number,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('tasks')
    .set({ lease_expires_at: now + leaseMs })
    .where((eb) => isCurrentClaim(eb, claim))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

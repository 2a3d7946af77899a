import type { Kysely } from 'kysely';
import type { DeliveryClaim } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { isCurrentDeliveryClaim } from './current-delivery-claim.js';

/** Hands back a claimed delivery that was never attempted: due again now, the attempt not counted. */
export async function releaseDelivery(
  db: Kysely<Database>,
  claim: DeliveryClaim,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set((eb) => ({
      attempt_count: eb('attempt_count', '-', 1),
      next_attempt_at: now,
      lease_owner: null,
      updated_at: now,
    }))
    .where((eb) => isCurrentDeliveryClaim(eb, claim))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

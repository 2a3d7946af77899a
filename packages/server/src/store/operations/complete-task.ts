import type { Kysely } from 'kysely';
import type { Claim } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { isCurrentClaim } from './current-claim.js';
import { enqueueDeliveries } from './enqueue-deliveries.js';

export async function completeTask(
  db: Kysely<Database>,
  claim: Claim,
  resultKey: string,
  now: number,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
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
      .returningAll()
      .executeTakeFirst();
    if (!row) return false;
    await enqueueDeliveries(trx, [row], now);
    return true;
  });
}

import type { Kysely } from 'kysely';
import type { DeliveryAttempt } from '../../domain/delivery.js';
import type { DeliveryClaim, DeliveryOutcome } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { isCurrentDeliveryClaim } from './current-delivery-claim.js';

/** Logs the attempt and moves the delivery on (succeeded, failed, or due again later), fenced by the claim. */
export async function finishDeliveryAttempt(
  db: Kysely<Database>,
  claim: DeliveryClaim,
  attempt: Omit<DeliveryAttempt, 'number'>,
  outcome: DeliveryOutcome,
  now: number,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const result = await trx
      .updateTable('webhook_deliveries')
      .set({
        status: outcome.status,
        next_attempt_at: outcome.status === 'pending' ? outcome.nextAttemptAt : null,
        lease_owner: null,
        updated_at: now,
      })
      .where((eb) => isCurrentDeliveryClaim(eb, claim))
      .executeTakeFirst();
    if (result.numUpdatedRows === 0n) return false;
    await trx
      .insertInto('webhook_attempts')
      .values({
        delivery_id: claim.deliveryId,
        number: claim.attempt,
        attempted_at: attempt.attemptedAt,
        duration_ms: attempt.durationMs,
        http_status: attempt.httpStatus,
        error: attempt.error,
      })
      .execute();
    return true;
  });
}

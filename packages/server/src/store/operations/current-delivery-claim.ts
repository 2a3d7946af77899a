import type { Expression, ExpressionBuilder, SqlBool } from 'kysely';
import type { DeliveryClaim } from '../../ports/store.js';
import type { Database } from '../database-schema.js';

/** The fence of a sender's writes: the delivery is still pending under this very attempt and sender. */
export function isCurrentDeliveryClaim(
  eb: ExpressionBuilder<Database, 'webhook_deliveries'>,
  claim: DeliveryClaim,
): Expression<SqlBool> {
  return eb.and([
    eb('id', '=', claim.deliveryId),
    eb('status', '=', 'pending'),
    eb('attempt_count', '=', claim.attempt),
    eb('lease_owner', '=', claim.workerId),
  ]);
}

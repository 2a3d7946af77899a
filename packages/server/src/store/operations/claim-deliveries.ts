import type { Kysely } from 'kysely';
import type { DeliveryRecord } from '../../domain/delivery.js';
import type { DeliveryClaimOptions } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { toDeliveryRecord } from '../delivery-row.js';

export interface ClaimDeliveriesOptions extends DeliveryClaimOptions {
  /** PostgreSQL: `FOR UPDATE SKIP LOCKED`, as in `claimTask`. */
  readonly skipLocked?: boolean;
}

/**
 * Takes up to `limit` due deliveries, oldest due first, skipping `excludeHosts`. Claiming counts the attempt
 * and pushes `next_attempt_at` out by the lease, so a delivery whose sender dies becomes due again by itself.
 */
export async function claimDeliveries(
  db: Kysely<Database>,
  options: ClaimDeliveriesOptions,
  now: number,
): Promise<DeliveryRecord[]> {
  if (options.limit <= 0) return [];
  let due = db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .orderBy('next_attempt_at')
    .orderBy('id')
    .limit(options.limit);
  if (options.excludeHosts.length > 0) due = due.where('host', 'not in', options.excludeHosts);
  if (options.skipLocked) due = due.forUpdate().skipLocked();

  const rows = await db
    .updateTable('webhook_deliveries')
    .set((eb) => ({
      attempt_count: eb('attempt_count', '+', 1),
      next_attempt_at: now + options.leaseMs,
      lease_owner: options.workerId,
      updated_at: now,
    }))
    .where('id', 'in', due)
    // Repeated on the row for PostgreSQL's READ COMMITTED, as in `claimTask`.
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .returningAll()
    .execute();
  return rows.map(toDeliveryRecord).sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
}

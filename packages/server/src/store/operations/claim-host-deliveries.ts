import type { Kysely } from 'kysely';
import type { DeliveryRecord } from '../../domain/delivery.js';
import type { Database } from '../database-schema.js';
import { toDeliveryRecord } from '../delivery-row.js';
import { type Placeholder, preparedQuery } from '../prepared-query.js';

type Value = Placeholder<'pending' | 'host' | 'now' | 'limit' | 'one' | 'leaseUntil' | 'workerId'>;

/**
 * The statement of claim-deliveries.ts for one receiver, whose room is the claim's limit: nothing to rank per
 * host, so none of the window step that was most of the claim's time (about 1 ms of 1.3 for 16 rows here),
 * and compiled once (prepared-query.ts), where building it with Kysely cost more than running it. A draining
 * dispatcher claims this way after each batch of a receiver's attempts.
 */
const claim = (skipLocked: boolean) =>
  preparedQuery((db, value: Value) => {
    let candidates = db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('status', '=', value<'pending'>('pending'))
      .where('host', '=', value<string>('host'))
      .where('next_attempt_at', '<=', value<number>('now'))
      .orderBy('next_attempt_at')
      .orderBy('id')
      .limit(value<number>('limit'));
    if (skipLocked) candidates = candidates.forUpdate().skipLocked();
    return (
      db
        // Materialized for PostgreSQL, as in claim-deliveries.ts: as a plain `id IN (subquery)` the locking
        // subquery would run again for each row.
        .with(
          (cte) => cte('candidates').materialized(),
          () => candidates,
        )
        .updateTable('webhook_deliveries')
        .set((eb) => ({
          attempt_count: eb('attempt_count', '+', value<number>('one')),
          next_attempt_at: value<number>('leaseUntil'),
          lease_owner: value<string>('workerId'),
          updated_at: value<number>('now'),
        }))
        .where('id', 'in', (eb) => eb.selectFrom('candidates').select('candidates.id'))
        .returningAll()
    );
  });

const claimLocking = claim(true);
const claimAlone = claim(false);

export interface HostClaim {
  readonly host: string;
  readonly workerId: string;
  readonly leaseMs: number;
  /** At most this many: the receiver's room. */
  readonly limit: number;
  /** PostgreSQL: `FOR UPDATE SKIP LOCKED`, as in `claimTask`. */
  readonly skipLocked: boolean;
}

/** Takes up to `limit` due deliveries to `host`, oldest due first, as claim-deliveries.ts does. */
export async function claimHostDeliveries(
  db: Kysely<Database>,
  options: HostClaim,
  now: number,
): Promise<DeliveryRecord[]> {
  if (options.limit <= 0) return [];
  const rows = await (options.skipLocked ? claimLocking : claimAlone)(db, {
    pending: 'pending',
    host: options.host,
    now,
    limit: options.limit,
    one: 1,
    leaseUntil: now + options.leaseMs,
    workerId: options.workerId,
  });
  return rows.map(toDeliveryRecord).sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
}

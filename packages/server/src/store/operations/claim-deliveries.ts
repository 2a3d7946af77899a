import { type Kysely, sql } from 'kysely';
import type { DeliveryRecord } from '../../domain/delivery.js';
import type { DeliveryClaimOptions } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { toDeliveryRecord } from '../delivery-row.js';
import { integerAt, isNoneOf } from '../list-parameters.js';
import { claimHostDeliveries } from './claim-host-deliveries.js';

export interface ClaimDeliveriesOptions extends DeliveryClaimOptions {
  /** PostgreSQL: `FOR UPDATE SKIP LOCKED`, as in `claimTask`. */
  readonly skipLocked?: boolean;
}

/** Candidates looked at per claimed row: room for a few hosts' worth to be capped away. */
const CANDIDATES_PER_ROW = 4;

/**
 * Takes up to `limit` due deliveries, oldest due first, skipping `excludeHosts` (or only `host`'s, by
 * claim-host-deliveries.ts) and, with `perHostLimit`, taking no more for a host than its room. Claiming counts
 * the attempt and pushes `next_attempt_at` out by the lease, so a delivery whose sender dies becomes due again
 * by itself.
 *
 * The hosts excluded and the rooms are one parameter each (list-parameters.ts), so the statement's text is the
 * same however many hosts there are.
 *
 * Three steps, each a `MATERIALIZED` CTE evaluated once: lock the oldest due candidates (PostgreSQL refuses
 * `FOR UPDATE` beside a window function, hence a step of its own), rank them per host and keep those within
 * the host's room, then update by primary key. As a plain `id IN (subquery)`, PostgreSQL plans a nested-loop
 * semi-join that runs the locking subquery again for every candidate row, each run passing over the rows this
 * very statement has updated and taking others: one claim with limit 4 took 29 of 60 due deliveries. The update
 * repeats no condition on `status`: the candidates are locked (PostgreSQL) or the writer is alone (SQLite),
 * and a condition there leads SQLite to walk the whole due index instead of the primary key.
 */
export async function claimDeliveries(
  db: Kysely<Database>,
  options: ClaimDeliveriesOptions,
  now: number,
): Promise<DeliveryRecord[]> {
  if (options.limit <= 0) return [];
  const { host, perHostLimit } = options;
  if (host !== undefined) {
    if (options.excludeHosts.includes(host)) return [];
    const room =
      perHostLimit === undefined ? options.limit : perHostLimit - (options.hostsInFlight?.[host] ?? 0);
    return claimHostDeliveries(
      db,
      {
        host,
        workerId: options.workerId,
        leaseMs: options.leaseMs,
        limit: Math.min(options.limit, room),
        skipLocked: options.skipLocked ?? false,
      },
      now,
    );
  }
  let candidates = db
    .selectFrom('webhook_deliveries')
    .select(['id', 'host', 'next_attempt_at'])
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .orderBy('next_attempt_at')
    .orderBy('id')
    .limit(perHostLimit === undefined ? options.limit : options.limit * CANDIDATES_PER_ROW);
  const { excludeHosts } = options;
  if (excludeHosts.length > 0)
    candidates = candidates.where((eb) => isNoneOf(db, eb.ref('host'), excludeHosts));
  if (options.skipLocked) candidates = candidates.forUpdate().skipLocked();

  // Parameters are typed explicitly: PostgreSQL would take a bare one for text and refuse `bigint <= text`.
  const int = (value: number) => sql<number>`cast(${value} as integer)`;
  const inFlight = Object.entries(options.hostsInFlight ?? {});
  // A host in flight has the room it has left, one parameter for them all (list-parameters.ts); any other, all of
  // it. With none in flight, as when the dispatcher is idle, each row is spared the lookup.
  const room =
    perHostLimit === undefined
      ? int(options.limit)
      : inFlight.length === 0
        ? int(perHostLimit)
        : sql<number>`coalesce(${integerAt(
            db,
            Object.fromEntries(inFlight.map(([host, count]) => [host, perHostLimit - count])),
            sql.ref('c.host'),
          )}, ${int(perHostLimit)})`;

  const rows = await db
    .with(
      (cte) => cte('candidates').materialized(),
      () => candidates,
    )
    .with(
      (cte) => cte('due').materialized(),
      (qb) =>
        qb
          .selectFrom((eb) =>
            eb
              .selectFrom('candidates as c')
              .select([
                'c.id',
                'c.next_attempt_at',
                sql<number>`row_number() over (partition by c.host order by c.next_attempt_at, c.id)`.as(
                  'rank',
                ),
                room.as('room'),
              ])
              .as('ranked'),
          )
          .select('ranked.id')
          .whereRef('ranked.rank', '<=', 'ranked.room')
          .orderBy('ranked.next_attempt_at')
          .orderBy('ranked.id')
          .limit(options.limit),
    )
    .updateTable('webhook_deliveries')
    .set((eb) => ({
      attempt_count: eb('attempt_count', '+', 1),
      next_attempt_at: now + options.leaseMs,
      lease_owner: options.workerId,
      updated_at: now,
    }))
    .where('id', 'in', (eb) => eb.selectFrom('due').select('due.id'))
    .returningAll()
    .execute();
  return rows.map(toDeliveryRecord).sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
}

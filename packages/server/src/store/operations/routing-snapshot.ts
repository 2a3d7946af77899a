import type { Kysely } from 'kysely';
import type { CircuitPolicy, CircuitRecord, RoutingSnapshot } from '../../domain/engine-route.js';
import type { EngineStats } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { preparedQuery } from '../prepared-query.js';
import { nullableMillis } from '../task-row.js';

/**
 * Tasks processing under a live lease, by engine, and every circuit row. Both are small: one row per running
 * worker slot, one per engine that ever failed. An expired lease does not hold a slot of its engine: its worker
 * is gone, and the claim that takes the task again must find room for it.
 */
export async function engineStats(db: Kysely<Database>, now: number): Promise<EngineStats> {
  return { now, inFlight: await inFlightByEngine(db, now), circuits: await circuitRecords(db) };
}

async function inFlightByEngine(db: Kysely<Database>, now: number): Promise<Map<string, number>> {
  const inFlight = await db
    .selectFrom('tasks')
    .select(['engine', (eb) => eb.fn.countAll<number | string>().as('count')])
    .where('status', '=', 'processing')
    .where('lease_expires_at', '>', now)
    .where('engine', 'is not', null)
    .groupBy('engine')
    .execute();
  return new Map(inFlight.map((row) => [row.engine ?? '', Number(row.count)]));
}

// Read by every claim (on PostgreSQL most go by the circuits cache instead): compiled once.
const allCircuits = preparedQuery((db) =>
  db.selectFrom('engine_circuits').select(['engine', 'failures', 'open_until', 'trial_until']),
);

export async function circuitRecords(db: Kysely<Database>): Promise<Map<string, CircuitRecord>> {
  const circuits = await allCircuits(db, {});
  return new Map(
    circuits.map((row): [string, CircuitRecord] => [
      row.engine,
      {
        failures: Number(row.failures),
        openUntil: nullableMillis(row.open_until),
        trialUntil: nullableMillis(row.trial_until),
      },
    ]),
  );
}

export async function routingSnapshot(
  db: Kysely<Database>,
  routing: { readonly maxConcurrency: ReadonlyMap<string, number>; readonly circuit: CircuitPolicy },
  now: number,
  /** The circuits as cached (circuits-cache.ts); read from `db` when absent. */
  circuits?: () => Promise<Map<string, CircuitRecord>>,
): Promise<RoutingSnapshot> {
  // Tasks in flight matter only to engines with a cap: without any, that count is not read.
  const inFlight = routing.maxConcurrency.size > 0 ? await inFlightByEngine(db, now) : new Map();
  return {
    now,
    inFlight,
    circuits: await (circuits ? circuits() : circuitRecords(db)),
    maxConcurrency: routing.maxConcurrency,
    circuit: routing.circuit,
  };
}

/**
 * Lets one task through a half-open circuit: false when another claim took the trial first (then the caller
 * rolls back and claims again later).
 */
export async function startTrial(
  db: Kysely<Database>,
  engine: string,
  policy: CircuitPolicy,
  until: number,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('engine_circuits')
    .set({ trial_until: until, updated_at: now })
    .where('engine', '=', engine)
    .where('failures', '>=', policy.failures)
    .where((eb) => eb.or([eb('open_until', 'is', null), eb('open_until', '<=', now)]))
    .where((eb) => eb.or([eb('trial_until', 'is', null), eb('trial_until', '<=', now)]))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

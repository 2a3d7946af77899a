import { type Kysely, sql } from 'kysely';
import type { CircuitPolicy } from '../../domain/engine-route.js';
import type { Database } from '../database-schema.js';

/**
 * One upsert per outcome, so concurrent outcomes from several processes add up in the row rather than
 * overwrite each other. A success only writes when the circuit had failures: most tasks write nothing here.
 * Says whether the circuit's row changed.
 */
export async function recordEngineOutcome(
  db: Kysely<Database>,
  engine: string,
  outcome: 'succeeded' | 'unavailable',
  policy: CircuitPolicy,
  now: number,
): Promise<boolean> {
  if (outcome === 'succeeded') {
    const reset = await db
      .updateTable('engine_circuits')
      .set({ failures: 0, open_until: null, trial_until: null, updated_at: now })
      .where('engine', '=', engine)
      .where('failures', '>', 0)
      .executeTakeFirst();
    return reset.numUpdatedRows > 0n;
  }
  const openUntil = now + policy.cooldownMs;
  await db
    .insertInto('engine_circuits')
    .values({
      engine,
      failures: 1,
      open_until: policy.failures <= 1 ? openUntil : null,
      trial_until: null,
      updated_at: now,
    })
    .onConflict((conflict) =>
      conflict.column('engine').doUpdateSet({
        failures: sql`engine_circuits.failures + 1`,
        open_until: sql`case when engine_circuits.failures + 1 >= ${policy.failures} then ${openUntil} else engine_circuits.open_until end`,
        trial_until: null,
        updated_at: now,
      }),
    )
    .execute();
  return true;
}

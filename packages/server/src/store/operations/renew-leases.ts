import type { Kysely } from 'kysely';
import type { Claim } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { integerAt, isOneOf } from '../list-parameters.js';

/** Claims renewed per statement: a pool following thousands of remote jobs renews them in a few statements. */
const CHUNK = 1000;

/**
 * Extends the leases of `claims`, all of `workerId`, from now; resolves with the tasks whose claim is still
 * current (the others' runs must stop). One statement per thousand claims.
 */
export async function renewLeases(
  db: Kysely<Database>,
  workerId: string,
  claims: readonly Claim[],
  leaseMs: number,
  now: number,
): Promise<Set<string>> {
  const renewed = new Set<string>();
  for (let start = 0; start < claims.length; start += CHUNK) {
    const chunk = claims.slice(start, start + CHUNK);
    // Each claim's attempt is checked in the statement: a stale claim (an older attempt of the same pool, which
    // lost its lease and claimed the task again) changes nothing. `tasks.id` in full: SQLite's json_each has an
    // `id` column of its own.
    const attempts = Object.fromEntries(chunk.map((claim) => [claim.taskId, claim.attempt]));
    const rows = await db
      .updateTable('tasks')
      .set((eb) => ({ lease_expires_at: eb.val(now + leaseMs) }))
      .where('status', '=', 'processing')
      .where('lease_owner', '=', workerId)
      .where((eb) =>
        isOneOf(
          db,
          eb.ref('id'),
          chunk.map((claim) => claim.taskId),
        ),
      )
      .where((eb) => eb(eb.ref('attempts'), '=', integerAt(db, attempts, eb.ref('tasks.id'))))
      .returning('id')
      .execute();
    for (const row of rows) renewed.add(row.id);
  }
  return renewed;
}

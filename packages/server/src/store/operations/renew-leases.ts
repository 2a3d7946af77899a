import type { Kysely } from 'kysely';
import type { Claim } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { isOneOf } from '../list-parameters.js';

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
      .returning(['id', 'attempts'])
      .execute();
    // The same pool may hold a newer claim of a task (its own lease lapsed and it claimed the task again): the
    // older claim is not current, whatever the row's owner.
    const attempts = new Map(rows.map((row) => [row.id, Number(row.attempts)]));
    for (const claim of chunk) if (attempts.get(claim.taskId) === claim.attempt) renewed.add(claim.taskId);
  }
  return renewed;
}

import type { Kysely, Updateable } from 'kysely';
import type { Claim } from '../../ports/store.js';
import type { Database, TasksTable } from '../database-schema.js';
import type { TaskRow } from '../task-row.js';
import { isCurrentClaim } from './current-claim.js';
import { enqueueDeliveries } from './enqueue-deliveries.js';

/**
 * Ends a run with a final status: applies `changes` (and releases the lease) while `claim` is still current,
 * and queues the task's callback in the same transaction, with `alongside` (its usage). False when the claim was
 * no longer current.
 */
export async function endRun(
  db: Kysely<Database>,
  claim: Claim,
  changes: Updateable<TasksTable> & { status: 'completed' | 'failed' },
  now: number,
  alongside?: (trx: Kysely<Database>, row: TaskRow) => Promise<void>,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable('tasks')
      .set((eb) => ({
        ...changes,
        revision: eb('revision', '+', 1),
        lease_owner: null,
        lease_expires_at: null,
        updated_at: now,
        completed_at: now,
      }))
      .where((eb) => isCurrentClaim(eb, claim))
      .returningAll()
      .executeTakeFirst();
    if (!row) return false;
    await enqueueDeliveries(trx, [row], now);
    await alongside?.(trx, row);
    return true;
  });
}

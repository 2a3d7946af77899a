import type { Kysely } from 'kysely';
import type { Database } from '../database-schema.js';
import { enqueueDeliveries } from './enqueue-deliveries.js';
import { releaseUsage } from './release-usage.js';

export async function failAbandonedTasks(
  db: Kysely<Database>,
  maxAttempts: number,
  now: number,
): Promise<number> {
  const times = maxAttempts === 1 ? 'once' : `${maxAttempts} times`;
  return db.transaction().execute(async (trx) => {
    const rows = await trx
      .updateTable('tasks')
      .set((eb) => ({
        status: 'failed',
        error_code: 'worker_lost',
        error_message: `The worker running this task stopped responding ${times}.`,
        lease_owner: null,
        lease_expires_at: null,
        revision: eb('revision', '+', 1),
        updated_at: now,
        completed_at: now,
      }))
      .where('status', '=', 'processing')
      .where('lease_expires_at', '<=', now)
      .where('attempts', '>=', maxAttempts)
      .returningAll()
      .execute();
    await enqueueDeliveries(trx, rows, now);
    await releaseUsage(
      trx,
      rows.map((row) => row.id),
    );
    return rows.length;
  });
}

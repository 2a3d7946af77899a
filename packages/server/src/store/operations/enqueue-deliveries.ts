import type { Kysely } from 'kysely';
import { deliveryFor } from '../../domain/delivery.js';
import type { Database } from '../database-schema.js';
import { toDeliveryRow } from '../delivery-row.js';
import { type TaskRow, toTaskRecord } from '../task-row.js';

/**
 * The outbox half of a status change: called inside the transaction that changed `rows`, it queues a
 * callback for each task that has a `callback_url`, so the change and its delivery commit or vanish together.
 */
export async function enqueueDeliveries(db: Kysely<Database>, rows: readonly TaskRow[], now: number) {
  // One row per statement: a statement of several rows would have a text of its own for each number of rows.
  for (const row of rows) {
    const delivery = deliveryFor(toTaskRecord(row));
    if (delivery) await db.insertInto('webhook_deliveries').values(toDeliveryRow(delivery, now)).execute();
  }
}

/**
 * Queues the `task.processing` callback only the first time a task starts: a task handed back to the queue
 * (shutdown) or re-claimed after a lost lease is still the same run as far as its owner is concerned.
 */
export async function enqueueFirstProcessingDelivery(db: Kysely<Database>, row: TaskRow, now: number) {
  const delivery = deliveryFor(toTaskRecord(row));
  if (!delivery) return;
  const earlier = await db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('task_id', '=', row.id)
    .where('event', '=', 'task.processing')
    .limit(1)
    .executeTakeFirst();
  if (!earlier) await db.insertInto('webhook_deliveries').values(toDeliveryRow(delivery, now)).execute();
}

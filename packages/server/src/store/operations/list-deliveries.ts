import type { Kysely } from 'kysely';
import type { DeliveryAttempt, DeliveryWithAttempts } from '../../domain/delivery.js';
import type { Database } from '../database-schema.js';
import { toDeliveryAttempt, toDeliveryRecord } from '../delivery-row.js';

/** A task's deliveries, oldest first, each with its attempts in order. */
export async function listDeliveries(db: Kysely<Database>, taskId: string): Promise<DeliveryWithAttempts[]> {
  const deliveries = await db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('task_id', '=', taskId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  if (deliveries.length === 0) return [];
  const attempts = await db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where(
      'delivery_id',
      'in',
      deliveries.map((d) => d.id),
    )
    .orderBy('delivery_id')
    .orderBy('number')
    .execute();
  const byDelivery = new Map<string, DeliveryAttempt[]>();
  for (const row of attempts) {
    const list = byDelivery.get(row.delivery_id) ?? [];
    list.push(toDeliveryAttempt(row));
    byDelivery.set(row.delivery_id, list);
  }
  return deliveries.map((row) => ({ ...toDeliveryRecord(row), attempts: byDelivery.get(row.id) ?? [] }));
}

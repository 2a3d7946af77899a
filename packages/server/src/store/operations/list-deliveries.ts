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
  // Joined rather than by a list of the deliveries' ids, whose length would make a statement of its own.
  const attempts = await db
    .selectFrom('webhook_attempts')
    .innerJoin('webhook_deliveries', 'webhook_deliveries.id', 'webhook_attempts.delivery_id')
    .selectAll('webhook_attempts')
    .where('webhook_deliveries.task_id', '=', taskId)
    .orderBy('webhook_attempts.delivery_id')
    .orderBy('webhook_attempts.number')
    .execute();
  const byDelivery = new Map<string, DeliveryAttempt[]>();
  for (const row of attempts) {
    const list = byDelivery.get(row.delivery_id) ?? [];
    list.push(toDeliveryAttempt(row));
    byDelivery.set(row.delivery_id, list);
  }
  return deliveries.map((row) => ({ ...toDeliveryRecord(row), attempts: byDelivery.get(row.id) ?? [] }));
}

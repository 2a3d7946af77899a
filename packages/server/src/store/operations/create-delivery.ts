import type { Kysely } from 'kysely';
import type { DeliveryRecord, NewDelivery } from '../../domain/delivery.js';
import type { Database } from '../database-schema.js';
import { toDeliveryRecord, toDeliveryRow } from '../delivery-row.js';

export async function createDelivery(
  db: Kysely<Database>,
  delivery: NewDelivery,
  now: number,
): Promise<DeliveryRecord> {
  const row = await db
    .insertInto('webhook_deliveries')
    .values(toDeliveryRow(delivery, now))
    .returningAll()
    .executeTakeFirstOrThrow();
  return toDeliveryRecord(row);
}

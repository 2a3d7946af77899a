/** Row <-> `DeliveryRecord` and `DeliveryAttempt`. */
import type { Insertable, Selectable } from 'kysely';
import {
  type DeliveryAttempt,
  type DeliveryRecord,
  fromStoredSnapshot,
  type NewDelivery,
  type StoredSnapshot,
} from '../domain/delivery.js';
import type { WebhookAttemptsTable, WebhookDeliveriesTable } from './database-schema.js';
import { millis, nullableMillis } from './task-row.js';

export type DeliveryRow = Selectable<WebhookDeliveriesTable>;

export function toDeliveryRecord(row: DeliveryRow): DeliveryRecord {
  return {
    id: row.id,
    taskId: row.task_id,
    accountId: row.account_id,
    event: row.event,
    url: row.url,
    host: row.host,
    payload: fromStoredSnapshot(JSON.parse(row.payload) as StoredSnapshot),
    status: row.status,
    attemptCount: Number(row.attempt_count),
    nextAttemptAt: nullableMillis(row.next_attempt_at),
    createdAt: millis(row.created_at),
    updatedAt: millis(row.updated_at),
  };
}

/** A new delivery is due at once. */
export function toDeliveryRow(delivery: NewDelivery, now: number): Insertable<WebhookDeliveriesTable> {
  return {
    id: delivery.id,
    task_id: delivery.taskId,
    account_id: delivery.accountId,
    event: delivery.event,
    url: delivery.url,
    host: delivery.host,
    payload: JSON.stringify(delivery.payload),
    status: 'pending',
    attempt_count: 0,
    next_attempt_at: now,
    lease_owner: null,
    created_at: now,
    updated_at: now,
  };
}

export function toDeliveryAttempt(row: Selectable<WebhookAttemptsTable>): DeliveryAttempt {
  return {
    number: Number(row.number),
    attemptedAt: millis(row.attempted_at),
    durationMs: Number(row.duration_ms),
    httpStatus: row.http_status === null ? null : Number(row.http_status),
    error: row.error,
  };
}

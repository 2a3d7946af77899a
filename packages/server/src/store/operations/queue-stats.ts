import type { Kysely } from 'kysely';
import type { QueueStats } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { millis } from '../task-row.js';

/** Each query reads an index on `status` (and lease expiry), never the finished tasks. */
export async function queueStats(db: Kysely<Database>, now: number): Promise<QueueStats> {
  const unfinished = await db
    .selectFrom('tasks')
    .select(['status', 'model', (eb) => eb.fn.countAll<number | string>().as('count')])
    .where('status', 'in', ['pending', 'processing'])
    .groupBy(['status', 'model'])
    .execute();
  const oldest = await db
    .selectFrom('tasks')
    .select('created_at')
    .where('status', '=', 'pending')
    .orderBy('created_at')
    .limit(1)
    .executeTakeFirst();
  const expired = await db
    .selectFrom('tasks')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('status', '=', 'processing')
    .where('lease_expires_at', '<=', now)
    .executeTakeFirstOrThrow();
  const deliveries = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('status', '=', 'pending')
    .executeTakeFirstOrThrow();
  return {
    now,
    unfinished: unfinished.map((row) => ({
      status: row.status as 'pending' | 'processing',
      model: row.model,
      count: Number(row.count),
    })),
    oldestPendingAt: oldest ? millis(oldest.created_at) : null,
    expiredLeases: Number(expired.count),
    pendingDeliveries: Number(deliveries.count),
  };
}

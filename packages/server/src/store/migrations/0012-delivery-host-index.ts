/**
 * When an attempt ends, the dispatcher claims more for that receiver alone (`host` in `claimDeliveries`): with
 * only 0002's `(status, next_attempt_at)`, finding a quiet receiver's few due deliveries meant reading every due
 * delivery ahead of them. This index makes it one range per receiver, in the order they are claimed.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('webhook_deliveries_host_due')
    .on('webhook_deliveries')
    .columns(['status', 'host', 'next_attempt_at', 'id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_host_due').execute();
}

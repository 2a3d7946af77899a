import type { Kysely } from 'kysely';
import type { Database } from '../database-schema.js';
import { isOneOf } from '../list-parameters.js';

/**
 * Deletes final tasks `ids` with what refers to them: callback attempts, deliveries and idempotency keys.
 * Runs inside the caller's transaction. The status condition stays on the tasks: only final ones go. The ids are
 * one parameter (list-parameters.ts), however many.
 */
export async function deleteTaskRows(trx: Kysely<Database>, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  const deliveries = trx
    .selectFrom('webhook_deliveries')
    .select('id')
    .where((eb) => isOneOf(trx, eb.ref('task_id'), ids));
  await trx.deleteFrom('webhook_attempts').where('delivery_id', 'in', deliveries).execute();
  await trx
    .deleteFrom('webhook_deliveries')
    .where((eb) => isOneOf(trx, eb.ref('task_id'), ids))
    .execute();
  await trx
    .deleteFrom('idempotency_keys')
    .where((eb) => isOneOf(trx, eb.ref('task_id'), ids))
    .execute();
  await trx
    .deleteFrom('tasks')
    .where((eb) => isOneOf(trx, eb.ref('id'), ids))
    .where('status', 'in', ['completed', 'failed'])
    .execute();
}

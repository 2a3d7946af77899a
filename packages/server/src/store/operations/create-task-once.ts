import type { Kysely } from 'kysely';
import type { IdempotentCreation, NewTask } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { millis, toTaskRecord } from '../task-row.js';
import { insertTask } from './create-task.js';

/**
 * Creates `task` under an idempotency key, or finds what the key already made: the key's row is inserted
 * first (a primary key per scope and key), so of concurrent creations with one key exactly one inserts it
 * and creates its task; the others wait for that commit and read its row. A row older than `since` is an
 * expired key and is replaced; a row whose task was deleted lets the key be used again. A creation refused by
 * a budget (`BudgetExceeded`) rolls the key's row back with it.
 */
export async function createTaskOnce(
  db: Kysely<Database>,
  task: NewTask,
  idempotency: { readonly key: string; readonly requestHash: string; readonly since: number },
  now: number,
  lockRows: boolean,
): Promise<IdempotentCreation> {
  return db.transaction().execute(async (trx) => {
    const keyRow = trx
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('account_id', '=', task.accountId)
      .where('environment', '=', task.environment)
      .where('key', '=', idempotency.key);
    const inserted = await trx
      .insertInto('idempotency_keys')
      .values({
        account_id: task.accountId,
        environment: task.environment,
        key: idempotency.key,
        request_hash: idempotency.requestHash,
        task_id: task.id,
        created_at: now,
      })
      .onConflict((oc) => oc.columns(['account_id', 'environment', 'key']).doNothing())
      .returning('task_id')
      .executeTakeFirst();
    if (inserted) return { outcome: 'created', task: await insertTask(trx, task, now, lockRows) };

    const existing = await keyRow.executeTakeFirstOrThrow();
    const made = await trx
      .selectFrom('tasks')
      .selectAll()
      .where('id', '=', existing.task_id)
      .executeTakeFirst();
    if (millis(existing.created_at) < idempotency.since || !made) {
      await trx
        .updateTable('idempotency_keys')
        .set({ request_hash: idempotency.requestHash, task_id: task.id, created_at: now })
        .where('account_id', '=', task.accountId)
        .where('environment', '=', task.environment)
        .where('key', '=', idempotency.key)
        .execute();
      return { outcome: 'created', task: await insertTask(trx, task, now, lockRows) };
    }
    if (existing.request_hash !== idempotency.requestHash) return { outcome: 'conflict' };
    return { outcome: 'replayed', task: toTaskRecord(made) };
  });
}

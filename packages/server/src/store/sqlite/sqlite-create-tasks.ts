import type { Insertable } from 'kysely';
import type { TaskRecord } from '../../domain/task.js';
import type { IdempotencyKeysTable } from '../database-schema.js';
import { type Creation, insertTaskRow, toKeyRow } from '../operations/create-task.js';
import { anyLimitIn, insertUsage, limitsOf } from '../operations/reserve-usage.js';
import { type Placeholder, placeholderRow, preparedQuery } from '../prepared-query.js';
import { toTaskRecord, toTaskRow, toUsageRow } from '../task-row.js';
import type { SqliteStatements } from './sqlite-statements.js';

const KEY_COLUMNS = {
  account_id: true,
  environment: true,
  key: true,
  request_hash: true,
  task_id: true,
  created_at: true,
} as const satisfies Record<keyof IdempotencyKeysTable, true>;

const insertNewKey = preparedQuery((db, value: Placeholder<keyof IdempotencyKeysTable>) =>
  db
    .insertInto('idempotency_keys')
    .values(placeholderRow<Insertable<IdempotencyKeysTable>>(KEY_COLUMNS, value))
    .onConflict((oc) => oc.columns(['account_id', 'environment', 'key']).doNothing())
    .returning('task_id'),
);

/**
 * Inside the caller's transaction and at once (sqlite-statements.ts): creates each task whose account exists,
 * neither it nor the API key has a monthly limit, and which has no idempotency key or a key new to the scope,
 * with its usage reservation and key, by the statements operations/create-task.ts runs for it, which need no
 * sums then. It answers the tasks it created by id; one it left out (a limit applies, no account has the id, its
 * key has a row) is for the transaction that checks limits and sorts keys out, as on PostgreSQL
 * (pg/pg-create-tasks.ts).
 */
export function createTasksNow(
  statements: SqliteStatements,
  creations: readonly Creation[],
): Map<string, TaskRecord> {
  const created = new Map<string, TaskRecord>();
  for (const creation of creations) {
    const { task, idempotency, now } = creation;
    const [limits] = statements.all(limitsOf, { accountId: task.accountId, apiKeyId: task.apiKeyId ?? null });
    if (!limits || anyLimitIn(limits)) continue;
    if (idempotency && statements.all(insertNewKey, toKeyRow({ ...creation, idempotency })).length === 0)
      continue;
    statements.run(insertUsage, toUsageRow(task, now));
    const row = toTaskRow(task, now);
    statements.run(insertTaskRow, row);
    created.set(task.id, toTaskRecord(row));
  }
  return created;
}

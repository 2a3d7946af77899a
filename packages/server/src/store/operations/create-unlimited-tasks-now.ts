import type { TaskRecord } from '../../domain/task.js';
import type { NewTask } from '../../ports/store.js';
import type { SqliteStatements } from '../sqlite-statements.js';
import { toTaskRecord, toTaskRow, toUsageRow } from '../task-row.js';
import { insertTaskRow } from './create-task.js';
import { anyLimitIn, insertUsage, limitsOf } from './reserve-usage.js';

/**
 * SQLite only, inside the caller's transaction and at once (sqlite-statements.ts): creates each task whose account
 * exists and neither it nor the API key has a monthly limit, with its usage reservation, by the statements
 * `createTask` runs for it (reserve-usage.ts, create-task.ts), which need no sums then. It answers the tasks it
 * created by id; one it left out (a limit applies, or no account has the id) is for the transaction that checks
 * the limits, as on PostgreSQL (create-unlimited-tasks.ts).
 */
export function createUnlimitedTasksNow(
  statements: SqliteStatements,
  tasks: readonly NewTask[],
  now: number,
): Map<string, TaskRecord> {
  const created = new Map<string, TaskRecord>();
  for (const task of tasks) {
    const [limits] = statements.all(limitsOf, { accountId: task.accountId, apiKeyId: task.apiKeyId ?? null });
    if (!limits || anyLimitIn(limits)) continue;
    statements.run(insertUsage, toUsageRow(task, now));
    const row = toTaskRow(task, now);
    statements.run(insertTaskRow, row);
    created.set(task.id, toTaskRecord(row));
  }
  return created;
}

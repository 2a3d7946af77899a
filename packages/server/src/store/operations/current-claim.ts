import type { Expression, ExpressionBuilder, SqlBool } from 'kysely';
import type { Claim } from '../../ports/store.js';
import type { Database } from '../database-schema.js';

/**
 * The fence of every write a worker makes: the task is still processing under this very claim. A worker
 * whose lease expired and was claimed again holds an older attempt, so its writes match no row.
 */
export function isCurrentClaim(eb: ExpressionBuilder<Database, 'tasks'>, claim: Claim): Expression<SqlBool> {
  return eb.and([
    eb('id', '=', claim.taskId),
    eb('status', '=', 'processing'),
    eb('attempts', '=', claim.attempt),
    eb('lease_owner', '=', claim.workerId),
  ]);
}

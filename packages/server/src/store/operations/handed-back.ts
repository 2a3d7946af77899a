import type { ExpressionBuilder, UpdateObject } from 'kysely';
import type { Database } from '../database-schema.js';

/**
 * A claimed task back to `pending` without counting the attempt: a graceful release, or the crash of the worker
 * that held it, is not the task's failure.
 */
export function handedBack(now: number) {
  return (eb: ExpressionBuilder<Database, 'tasks'>): UpdateObject<Database, 'tasks'> => ({
    status: 'pending',
    attempts: eb('attempts', '-', 1),
    revision: eb('revision', '+', 1),
    lease_owner: null,
    lease_expires_at: null,
    updated_at: now,
  });
}

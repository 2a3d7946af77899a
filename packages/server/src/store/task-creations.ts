import type { IdempotentCreation } from '../ports/store.js';
import type { Creation } from './operations/create-task.js';

/**
 * How a store's database creates tasks: each dialect's fastest way for the common case (no monthly limit, no
 * key seen before) with the transaction of operations/create-task.ts for the rest (pg/pg-creations.ts,
 * sqlite/sqlite-creations.ts).
 */
export interface TaskCreations {
  create(creation: Creation): Promise<IdempotentCreation>;
  /** Resolves once every creation submitted so far has run or been refused. */
  drain(): Promise<void>;
}

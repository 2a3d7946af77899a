import type { Kysely } from 'kysely';
import type { Claim } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { endRun } from './end-run.js';
import { settleUsage } from './settle-usage.js';

export function completeTask(
  db: Kysely<Database>,
  claim: Claim,
  resultKey: string,
  now: number,
): Promise<boolean> {
  return endRun(db, claim, { status: 'completed', progress: 100, result_key: resultKey }, now, (trx, row) =>
    settleUsage(trx, row, now),
  );
}

import type { Kysely } from 'kysely';
import type { TaskError } from '../../domain/task.js';
import type { Claim } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { endRun } from './end-run.js';
import { releaseUsage } from './release-usage.js';

export function failTask(
  db: Kysely<Database>,
  claim: Claim,
  error: TaskError,
  now: number,
): Promise<boolean> {
  return endRun(
    db,
    claim,
    { status: 'failed', error_code: error.code, error_message: error.message },
    now,
    (trx, row) => releaseUsage(trx, [row.id]),
  );
}

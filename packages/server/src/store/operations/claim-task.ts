import type { Kysely } from 'kysely';
import type { TaskRecord } from '../../domain/task.js';
import type { ClaimOptions } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { toTaskRecord } from '../task-row.js';

export interface ClaimTaskOptions extends ClaimOptions {
  readonly maxAttempts: number;
  /**
   * PostgreSQL: lock the candidate row `FOR UPDATE SKIP LOCKED` so concurrent claimers pass over it.
   * SQLite has one writer and runs the single statement atomically, so it needs (and accepts) no lock.
   */
  readonly skipLocked?: boolean;
}

/** One statement: pick the oldest claimable task and take it, so no two claimers get the same one. */
export async function claimTask(
  db: Kysely<Database>,
  options: ClaimTaskOptions,
  now: number,
): Promise<TaskRecord | undefined> {
  const { models } = options;
  if (models?.length === 0) return undefined;
  let candidate = db
    .selectFrom('tasks')
    .select('id')
    .where((eb) =>
      eb.or([
        eb('status', '=', 'pending'),
        eb.and([
          eb('status', '=', 'processing'),
          eb('lease_expires_at', '<=', now),
          eb('attempts', '<', options.maxAttempts),
        ]),
      ]),
    )
    .orderBy('created_at')
    .orderBy('id')
    .limit(1);
  if (models) candidate = candidate.where('model', 'in', models);
  if (options.skipLocked) candidate = candidate.forUpdate().skipLocked();

  const row = await db
    .updateTable('tasks')
    .set((eb) => ({
      status: 'processing',
      attempts: eb('attempts', '+', 1),
      lease_owner: options.workerId,
      lease_expires_at: now + options.leaseMs,
      updated_at: now,
    }))
    .where('id', '=', candidate)
    .returningAll()
    .executeTakeFirst();
  return row && toTaskRecord(row);
}

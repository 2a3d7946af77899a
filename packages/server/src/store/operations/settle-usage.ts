import type { Kysely } from 'kysely';
import { frameSize } from '../../domain/frame-size.js';
import type { Database } from '../database-schema.js';
import { type TaskRow, toTaskRecord } from '../task-row.js';

/**
 * Turns a completed task's reservation into what it used: the engine it ran on and the frame it rendered (an
 * `adaptive` ratio resolved on the worker is in its params by now). Runs in the completion's transaction. The
 * cost stays the one reserved: the price when the task was created.
 */
export async function settleUsage(trx: Kysely<Database>, row: TaskRow, now: number): Promise<void> {
  const { params } = toTaskRecord(row);
  const ratio = params.aspect_ratio;
  const frame = ratio === 'adaptive' ? undefined : frameSize(params.quality, ratio);
  await trx
    .updateTable('usage_records')
    .set({
      state: 'settled',
      engine: row.engine,
      aspect_ratio: ratio,
      width: frame?.width ?? null,
      height: frame?.height ?? null,
      settled_at: now,
    })
    .where('task_id', '=', row.id)
    .execute();
}

import type { Kysely } from 'kysely';
import type { ModelId } from '../../domain/models.js';
import type { RecentRunsQuery } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { millis } from '../task-row.js';

/**
 * How long the model's last `limit` completed runs took, claim to completion (ms), newest first, among those
 * completed since `since`: the rows of the partial index `tasks_model_runs` (migration 0017), read newest first.
 */
export async function recentRunTimes(
  db: Kysely<Database>,
  model: ModelId,
  query: RecentRunsQuery,
): Promise<number[]> {
  const rows = await db
    .selectFrom('tasks')
    .select(['started_at', 'completed_at'])
    .where('model', '=', model)
    .where('status', '=', 'completed')
    .where('started_at', 'is not', null)
    .where('completed_at', '>=', query.since)
    .orderBy('completed_at', 'desc')
    .limit(query.limit)
    .execute();
  return rows.flatMap(({ started_at, completed_at }) =>
    started_at === null || completed_at === null
      ? []
      : [Math.max(0, millis(completed_at) - millis(started_at))],
  );
}

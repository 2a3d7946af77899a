import { type Kysely, sql } from 'kysely';
import type { UsageQuery, UsageSum } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { nullableMillis } from '../task-row.js';

const DAY_MS = 86_400_000;

/** `YYYY-MM-DD` of a UTC day number (days since the epoch). */
function dayOf(dayNumber: number): string {
  return new Date(dayNumber * DAY_MS).toISOString().slice(0, 10);
}

/**
 * The account's usage records created in [start, end), summed per group and state. A day is a UTC day of the
 * task's creation, computed in SQL as an integer division (the same in SQLite and PostgreSQL).
 */
export async function listUsage(
  db: Kysely<Database>,
  accountId: string,
  query: UsageQuery,
): Promise<UsageSum[]> {
  const bucket =
    query.groupBy === 'day'
      ? sql<string | null>`cast(created_at / ${sql.lit(DAY_MS)} as bigint)`
      : query.groupBy === 'model'
        ? sql<string | null>`model`
        : sql<string | null>`api_key_id`;
  let select = db
    .selectFrom('usage_records')
    .select((eb) => [
      bucket.as('bucket'),
      'state',
      eb.fn.countAll<number | string>().as('tasks'),
      eb.fn.sum<number | string>('video_seconds').as('seconds'),
      eb.fn.sum<number | string | null>('cost').as('cost'),
    ])
    .where('account_id', '=', accountId)
    .where('created_at', '>=', query.start)
    .where('created_at', '<', query.end);
  if (query.environment !== undefined) select = select.where('environment', '=', query.environment);
  const rows = await select.groupBy([bucket, 'state']).execute();
  return rows.map((row) => ({
    key:
      row.bucket === null ? null : query.groupBy === 'day' ? dayOf(Number(row.bucket)) : String(row.bucket),
    state: row.state,
    tasks: Number(row.tasks),
    videoSeconds: Number(row.seconds),
    costMicros: nullableMillis(row.cost),
  }));
}

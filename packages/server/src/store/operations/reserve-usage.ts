import type { Insertable, Kysely } from 'kysely';
import {
  BudgetExceeded,
  exceededLimit,
  monthStart,
  nextMonthStart,
  type UsageAmount,
  type UsageLimits,
} from '../../domain/usage.js';
import type { NewTask } from '../../ports/store.js';
import type { Database, UsageRecordsTable } from '../database-schema.js';
import { type Placeholder, placeholderRow, preparedQuery } from '../prepared-query.js';
import { millis, toUsageLimits, toUsageRow } from '../task-row.js';

// Every creation runs these two (prepared-query.ts); the sums and the lock only when a limit exists. The
// account's and the key's limits come in one statement: on PostgreSQL each statement is a round trip.
export const limitsOf = preparedQuery((db, value: Placeholder<'accountId' | 'apiKeyId'>) =>
  db
    .selectFrom('accounts')
    .leftJoin('api_keys', (join) => join.on('api_keys.id', '=', value<string | null>('apiKeyId')))
    .select([
      'accounts.monthly_video_seconds',
      'accounts.monthly_budget',
      'api_keys.monthly_video_seconds as key_monthly_video_seconds',
      'api_keys.monthly_budget as key_monthly_budget',
    ])
    .where('accounts.id', '=', value<string>('accountId')),
);

/** Every column of a usage record: the placeholders of its prepared `INSERT`s. */
export const USAGE_COLUMNS = {
  task_id: true,
  account_id: true,
  api_key_id: true,
  environment: true,
  model: true,
  engine: true,
  quality: true,
  aspect_ratio: true,
  width: true,
  height: true,
  video_seconds: true,
  cost: true,
  state: true,
  created_at: true,
  settled_at: true,
} as const satisfies Record<keyof UsageRecordsTable, true>;

export const insertUsage = preparedQuery((db, value: Placeholder<keyof UsageRecordsTable>) =>
  db.insertInto('usage_records').values(placeholderRow<Insertable<UsageRecordsTable>>(USAGE_COLUMNS, value)),
);

const hasLimit = (limits: UsageLimits | undefined): boolean =>
  limits !== undefined && (limits.monthlyVideoSeconds !== null || limits.monthlyBudgetMicros !== null);

type LimitsRow = Awaited<ReturnType<typeof limitsOf>>[number];

const keyLimitColumns = (limits: LimitsRow) => ({
  monthly_video_seconds: limits.key_monthly_video_seconds,
  monthly_budget: limits.key_monthly_budget,
});

/** Whether the account or the API key of a row `limitsOf` read has a monthly limit. */
export function anyLimitIn(limits: LimitsRow): boolean {
  return hasLimit(toUsageLimits(limits)) || hasLimit(toUsageLimits(keyLimitColumns(limits)));
}

/** This month's reserved and settled usage of the account, or of one of its keys. */
async function usedSince(
  trx: Kysely<Database>,
  since: number,
  holder: { accountId: string } | { apiKeyId: string },
): Promise<UsageAmount> {
  let query = trx
    .selectFrom('usage_records')
    .select((eb) => [
      eb.fn.coalesce(eb.fn.sum<number | string>('video_seconds'), eb.lit(0)).as('seconds'),
      eb.fn.coalesce(eb.fn.sum<number | string>('cost'), eb.lit(0)).as('cost'),
    ])
    .where('created_at', '>=', since);
  query =
    'accountId' in holder
      ? query.where('account_id', '=', holder.accountId)
      : query.where('api_key_id', '=', holder.apiKeyId);
  const row = await query.executeTakeFirstOrThrow();
  return { videoSeconds: Number(row.seconds), costMicros: millis(row.cost) };
}

/**
 * Reserves what `task` will use, inside the transaction that creates it, after checking the monthly limits of
 * its account and API key against this month's reserved and settled usage; throws `BudgetExceeded` instead.
 *
 * Two creations must not both read the same sum and both pass. With `lockRows` (PostgreSQL) the account's row is
 * locked `FOR UPDATE` before summing, so creations of one account in any process wait for each other (a key
 * belongs to one account, so its limit is covered too). SQLite has one writer: Kysely runs a store's transactions
 * one at a time on its one connection, and a second process's transaction that read the sum before this one wrote
 * fails to write (SQLITE_BUSY) rather than passing the limit.
 */
export async function reserveUsage(
  trx: Kysely<Database>,
  task: NewTask,
  now: number,
  lockRows: boolean,
): Promise<void> {
  const needed: UsageAmount = { videoSeconds: task.params.duration, costMicros: task.costMicros ?? null };
  const apiKeyId = task.apiKeyId ?? null;
  const [limits] = await limitsOf(trx, { accountId: task.accountId, apiKeyId });
  const accountRow = limits && {
    monthly_video_seconds: limits.monthly_video_seconds,
    monthly_budget: limits.monthly_budget,
  };
  const keyLimit = limits && toUsageLimits(keyLimitColumns(limits));

  if (limits && anyLimitIn(limits)) {
    // Read again under the lock: the limits as they are now, and the sums only after the creations ahead of
    // this one committed.
    const locked = lockRows
      ? await trx
          .selectFrom('accounts')
          .select(['monthly_video_seconds', 'monthly_budget'])
          .where('id', '=', task.accountId)
          .forUpdate()
          .executeTakeFirst()
      : accountRow;
    const since = monthStart(now);
    const resetsAt = nextMonthStart(now);
    const refusal =
      (locked &&
        hasLimit(toUsageLimits(locked)) &&
        exceededLimit(
          'account',
          toUsageLimits(locked),
          await usedSince(trx, since, { accountId: task.accountId }),
          needed,
          resetsAt,
        )) ||
      (apiKeyId !== null &&
        keyLimit &&
        hasLimit(keyLimit) &&
        exceededLimit('api_key', keyLimit, await usedSince(trx, since, { apiKeyId }), needed, resetsAt)) ||
      undefined;
    if (refusal) throw new BudgetExceeded(refusal);
  }

  await insertUsage(trx, toUsageRow(task, now));
}

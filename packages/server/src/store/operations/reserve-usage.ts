import type { Kysely } from 'kysely';
import {
  BudgetExceeded,
  exceededLimit,
  monthStart,
  nextMonthStart,
  type UsageAmount,
  type UsageLimits,
} from '../../domain/usage.js';
import type { NewTask } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { millis, toUsageLimits } from '../task-row.js';

const hasLimit = (limits: UsageLimits | undefined): boolean =>
  limits !== undefined && (limits.monthlyVideoSeconds !== null || limits.monthlyBudgetMicros !== null);

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
  const keyRow =
    apiKeyId === null
      ? undefined
      : await trx
          .selectFrom('api_keys')
          .select(['monthly_video_seconds', 'monthly_budget'])
          .where('id', '=', apiKeyId)
          .executeTakeFirst();
  const keyLimits = keyRow && toUsageLimits(keyRow);
  const accountQuery = trx
    .selectFrom('accounts')
    .select(['monthly_video_seconds', 'monthly_budget'])
    .where('id', '=', task.accountId);
  const accountRow = await accountQuery.executeTakeFirst();
  const accountLimits = accountRow && toUsageLimits(accountRow);

  if (hasLimit(accountLimits) || hasLimit(keyLimits)) {
    // Read again under the lock: the limits as they are now, and the sums only after the creations ahead of
    // this one committed.
    const locked = lockRows ? await accountQuery.forUpdate().executeTakeFirst() : accountRow;
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
        keyLimits &&
        hasLimit(keyLimits) &&
        exceededLimit('api_key', keyLimits, await usedSince(trx, since, { apiKeyId }), needed, resetsAt)) ||
      undefined;
    if (refusal) throw new BudgetExceeded(refusal);
  }

  await trx
    .insertInto('usage_records')
    .values({
      task_id: task.id,
      account_id: task.accountId,
      api_key_id: apiKeyId,
      environment: task.environment,
      model: task.model,
      engine: null,
      quality: task.params.quality,
      aspect_ratio: task.params.aspect_ratio,
      width: null,
      height: null,
      video_seconds: needed.videoSeconds,
      cost: needed.costMicros,
      state: 'reserved',
      created_at: now,
      settled_at: null,
    })
    .execute();
}

import type { Kysely } from 'kysely';
import type { UsageLimits } from '../../domain/usage.js';
import type { Database } from '../database-schema.js';
import { toLimitColumns, toUsageLimits } from '../task-row.js';

export async function getAccountLimits(
  db: Kysely<Database>,
  accountId: string,
): Promise<UsageLimits | undefined> {
  const row = await db
    .selectFrom('accounts')
    .select(['monthly_video_seconds', 'monthly_budget'])
    .where('id', '=', accountId)
    .executeTakeFirst();
  return row && toUsageLimits(row);
}

export async function setAccountLimits(
  db: Kysely<Database>,
  accountId: string,
  limits: UsageLimits,
): Promise<boolean> {
  const result = await db
    .updateTable('accounts')
    .set(toLimitColumns(limits))
    .where('id', '=', accountId)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

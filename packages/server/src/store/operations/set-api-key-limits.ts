import type { Kysely } from 'kysely';
import type { UsageLimits } from '../../domain/usage.js';
import type { ApiKeyRecord } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { toApiKeyRecord, toLimitColumns } from '../task-row.js';
import { findOnlyActiveKey } from './find-only-active-key.js';

/**
 * Sets the monthly limits of the one active key with this id or displayed prefix (of `accountId`'s keys when
 * given), as `revokeApiKey` finds it: a prefix shared by several active keys changes nothing.
 */
export async function setApiKeyLimits(
  db: Kysely<Database>,
  idOrPrefix: string,
  limits: UsageLimits,
  accountId: string | undefined,
  now: number,
): Promise<ApiKeyRecord | undefined> {
  const id = await findOnlyActiveKey(db, idOrPrefix, accountId, now);
  if (id === undefined) return undefined;
  const row = await db
    .updateTable('api_keys')
    .set(toLimitColumns(limits))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
  return row && toApiKeyRecord(row);
}

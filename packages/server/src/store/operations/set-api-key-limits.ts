import type { Kysely } from 'kysely';
import type { UsageLimits } from '../../domain/usage.js';
import type { ApiKeyRecord } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { toApiKeyRecord, toLimitColumns } from '../task-row.js';

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
  let query = db
    .selectFrom('api_keys')
    .select('id')
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .where((eb) => eb.or([eb('id', '=', idOrPrefix), eb('prefix', '=', idOrPrefix)]));
  if (accountId !== undefined) query = query.where('account_id', '=', accountId);
  const matches = await query.limit(2).execute();
  const only = matches.length === 1 ? matches[0] : undefined;
  if (!only) return undefined;
  const row = await db
    .updateTable('api_keys')
    .set(toLimitColumns(limits))
    .where('id', '=', only.id)
    .returningAll()
    .executeTakeFirst();
  return row && toApiKeyRecord(row);
}

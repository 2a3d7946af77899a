import type { Kysely } from 'kysely';
import type { Database } from '../database-schema.js';

/**
 * The id of the one active key with this id or displayed prefix (of `accountId`'s keys when given); undefined
 * when none matches or a prefix is shared by several active keys: acting on keys the operator did not mean
 * (revoking them locks out their clients) is worse than asking for the id.
 */
export async function findOnlyActiveKey(
  db: Kysely<Database>,
  idOrPrefix: string,
  accountId: string | undefined,
  now: number,
): Promise<string | undefined> {
  let query = db
    .selectFrom('api_keys')
    .select('id')
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .where((eb) => eb.or([eb('id', '=', idOrPrefix), eb('prefix', '=', idOrPrefix)]));
  if (accountId !== undefined) query = query.where('account_id', '=', accountId);
  const matches = await query.limit(2).execute();
  return matches.length === 1 ? matches[0]?.id : undefined;
}

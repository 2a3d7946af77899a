import type { Kysely } from 'kysely';
import type { Database } from '../database-schema.js';

/**
 * Revokes the one active key with this id or displayed prefix (of `accountId`'s keys when given). A prefix
 * shared by several active keys revokes nothing: revoking keys the operator did not mean would lock out their
 * clients.
 */
export async function revokeApiKey(
  db: Kysely<Database>,
  idOrPrefix: string,
  accountId: string | undefined,
  now: number,
): Promise<boolean> {
  let query = db
    .selectFrom('api_keys')
    .select('id')
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .where((eb) => eb.or([eb('id', '=', idOrPrefix), eb('prefix', '=', idOrPrefix)]));
  if (accountId !== undefined) query = query.where('account_id', '=', accountId);
  const matches = await query.limit(2).execute();
  const only = matches.length === 1 ? matches[0] : undefined;
  if (!only) return false;
  const result = await db
    .updateTable('api_keys')
    .set({ revoked_at: now })
    .where('id', '=', only.id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

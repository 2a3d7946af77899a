import type { Kysely } from 'kysely';
import type { Database } from '../database-schema.js';
import { findOnlyActiveKey } from './find-only-active-key.js';

/** Revokes the one active key with this id or displayed prefix (find-only-active-key.ts). */
export async function revokeApiKey(
  db: Kysely<Database>,
  idOrPrefix: string,
  accountId: string | undefined,
  now: number,
): Promise<boolean> {
  const id = await findOnlyActiveKey(db, idOrPrefix, accountId, now);
  if (id === undefined) return false;
  const result = await db
    .updateTable('api_keys')
    .set({ revoked_at: now })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

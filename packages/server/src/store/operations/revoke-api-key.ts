import type { Kysely } from 'kysely';
import type { Database } from '../database-schema.js';

export async function revokeApiKey(db: Kysely<Database>, idOrPrefix: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set({ revoked_at: now })
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('id', '=', idOrPrefix), eb('prefix', '=', idOrPrefix)]))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

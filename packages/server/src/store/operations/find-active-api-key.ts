import type { Kysely } from 'kysely';
import type { ApiKeyRecord } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { toApiKeyRecord } from '../task-row.js';

export async function findActiveApiKey(
  db: Kysely<Database>,
  hash: string,
  now: number,
): Promise<ApiKeyRecord | undefined> {
  const row = await db
    .selectFrom('api_keys')
    .selectAll()
    .where('hash', '=', hash)
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .executeTakeFirst();
  return row && toApiKeyRecord(row);
}

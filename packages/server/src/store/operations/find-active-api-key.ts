import type { Kysely } from 'kysely';
import type { ApiKeyRecord } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { toApiKeyRecord } from '../task-row.js';

export async function findActiveApiKey(
  db: Kysely<Database>,
  hash: string,
): Promise<ApiKeyRecord | undefined> {
  const row = await db
    .selectFrom('api_keys')
    .selectAll()
    .where('hash', '=', hash)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return row && toApiKeyRecord(row);
}

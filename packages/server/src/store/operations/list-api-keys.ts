import type { Kysely } from 'kysely';
import type { ApiKeyRecord } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { toApiKeyRecord } from '../task-row.js';

export async function listApiKeys(db: Kysely<Database>, accountId?: string): Promise<ApiKeyRecord[]> {
  let query = db.selectFrom('api_keys').selectAll().orderBy('created_at').orderBy('id');
  if (accountId !== undefined) query = query.where('account_id', '=', accountId);
  return (await query.execute()).map(toApiKeyRecord);
}

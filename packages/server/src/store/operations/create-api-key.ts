import type { Kysely } from 'kysely';
import { newId } from '../../domain/identifiers.js';
import { NO_LIMITS } from '../../domain/usage.js';
import type { ApiKeyRecord, NewApiKey } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { toLimitColumns } from '../task-row.js';

export async function createApiKey(db: Kysely<Database>, key: NewApiKey, now: number): Promise<ApiKeyRecord> {
  const limits = key.limits ?? NO_LIMITS;
  const id = newId('key');
  await db
    .insertInto('api_keys')
    .values({
      id,
      account_id: key.accountId,
      name: key.name,
      environment: key.environment,
      prefix: key.prefix,
      hash: key.hash,
      created_at: now,
      last_used_at: null,
      revoked_at: null,
      expires_at: null,
      ...toLimitColumns(limits),
    })
    .execute();
  return {
    id,
    accountId: key.accountId,
    name: key.name,
    environment: key.environment,
    prefix: key.prefix,
    createdAt: now,
    lastUsedAt: null,
    revokedAt: null,
    expiresAt: null,
    limits,
  };
}

import type { Kysely } from 'kysely';
import type { ApiKeyRotation, NewApiKey } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { toApiKeyRecord, toUsageLimits } from '../task-row.js';
import { createApiKey } from './create-api-key.js';

/**
 * Replaces an active key of `accountId` with `replacement` in one transaction: the old key keeps working for
 * `graceMs` (its clients move over meanwhile) and is revoked at once when `graceMs` is 0. Undefined when the
 * account has no such active key.
 */
export async function rotateApiKey(
  db: Kysely<Database>,
  id: string,
  accountId: string,
  replacement: Omit<NewApiKey, 'accountId' | 'name' | 'environment' | 'limits'>,
  graceMs: number,
  now: number,
): Promise<ApiKeyRotation | undefined> {
  return db.transaction().execute(async (trx) => {
    const old = await trx
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .executeTakeFirst();
    if (!old) return undefined;
    const retired = graceMs > 0 ? { expires_at: now + graceMs } : { expires_at: now, revoked_at: now };
    await trx.updateTable('api_keys').set(retired).where('id', '=', id).execute();
    const created = await createApiKey(
      trx,
      // The replacement carries on the key's limits (its usage starts from nothing: usage is per key id).
      { ...replacement, accountId, name: old.name, environment: old.environment, limits: toUsageLimits(old) },
      now,
    );
    return { created, previous: toApiKeyRecord({ ...old, ...retired }) };
  });
}

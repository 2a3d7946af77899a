import type { Kysely } from 'kysely';
import type { FixedAspectRatio } from '../../domain/frame-size.js';
import type { GenerationParams } from '../../domain/generation-request.js';
import type { Claim } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { isCurrentClaim } from './current-claim.js';

export async function recordAspectRatio(
  db: Kysely<Database>,
  claim: Claim,
  ratio: FixedAspectRatio,
  now: number,
): Promise<boolean> {
  const row = await db
    .selectFrom('tasks')
    .select('params')
    .where((eb) => isCurrentClaim(eb, claim))
    .executeTakeFirst();
  if (!row) return false;
  const params = JSON.parse(row.params) as GenerationParams;
  if (params.aspect_ratio === ratio) return true;
  // Params change only here, under the claim, so the read above is still what the update replaces.
  const result = await db
    .updateTable('tasks')
    .set({ params: JSON.stringify({ ...params, aspect_ratio: ratio }), updated_at: now })
    .where((eb) => isCurrentClaim(eb, claim))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

import type { Kysely } from 'kysely';
import type { Claim } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { isCurrentClaim } from './current-claim.js';

export async function reportProgress(
  db: Kysely<Database>,
  claim: Claim,
  progress: number,
  now: number,
): Promise<boolean> {
  // 100 means completed, which only `completeTask` may say.
  const value = Number.isFinite(progress) ? Math.max(0, Math.min(99, Math.floor(progress))) : 0;
  const result = await db
    .updateTable('tasks')
    .set((eb) => ({
      progress: eb.case().when('progress', '<', value).then(value).else(eb.ref('progress')).end(),
      updated_at: eb
        .case()
        .when('progress', '<', value)
        .then(now)
        .else(eb.ref('updated_at'))
        .end()
        .$castTo<number>(),
    }))
    .where((eb) => isCurrentClaim(eb, claim))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

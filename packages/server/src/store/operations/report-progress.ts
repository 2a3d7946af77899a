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
  // `eb.val`: Kysely writes a bare number given to `then` into the SQL text, and a statement per progress value
  // and instant was prepared and kept (sqlite-handles.ts), about 12 KB of the server's memory per task.
  const result = await db
    .updateTable('tasks')
    .set((eb) => ({
      progress: eb.case().when('progress', '<', value).then(eb.val(value)).else(eb.ref('progress')).end(),
      revision: eb
        .case()
        .when('progress', '<', value)
        .then(eb('revision', '+', eb.val(1)))
        .else(eb.ref('revision'))
        .end(),
      updated_at: eb
        .case()
        .when('progress', '<', value)
        .then(eb.val(now))
        .else(eb.ref('updated_at'))
        .end()
        .$castTo<number>(),
    }))
    .where((eb) => isCurrentClaim(eb, claim))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

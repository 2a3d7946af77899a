import type { Kysely } from 'kysely';
import type { Claim } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { isCurrentClaim } from './current-claim.js';
import { handedBack } from './handed-back.js';

export async function releaseTask(db: Kysely<Database>, claim: Claim, now: number): Promise<boolean> {
  const result = await db
    .updateTable('tasks')
    .set(handedBack(now))
    .where((eb) => isCurrentClaim(eb, claim))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

import type { Kysely } from 'kysely';
import type { Database } from '../database-schema.js';

/** Failures older than this are no use to any rate limit and are pruned as new ones arrive. */
const KEEP_MS = 24 * 60 * 60 * 1000;

export async function recordSignInFailure(db: Kysely<Database>, email: string, now: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx
      .deleteFrom('sign_in_failures')
      .where('failed_at', '<', now - KEEP_MS)
      .execute();
    await trx.insertInto('sign_in_failures').values({ email, failed_at: now }).execute();
  });
}

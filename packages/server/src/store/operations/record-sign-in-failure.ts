import type { Kysely } from 'kysely';
import type { Database } from '../database-schema.js';

export async function recordSignInFailure(db: Kysely<Database>, email: string, now: number): Promise<void> {
  await db.insertInto('sign_in_failures').values({ email, failed_at: now }).execute();
}

/** Forgets every email's failures before `before` (epoch ms). */
export async function forgetSignInFailures(db: Kysely<Database>, before: number): Promise<void> {
  await db.deleteFrom('sign_in_failures').where('failed_at', '<', before).execute();
}

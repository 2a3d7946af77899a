import type { Kysely } from 'kysely';
import type { Database } from '../database-schema.js';
import { millis } from '../task-row.js';

/** When `email`'s sign-ins failed since `since` (epoch ms), oldest first. */
export async function listSignInFailures(
  db: Kysely<Database>,
  email: string,
  since: number,
): Promise<number[]> {
  const rows = await db
    .selectFrom('sign_in_failures')
    .select('failed_at')
    .where('email', '=', email)
    .where('failed_at', '>=', since)
    .orderBy('failed_at')
    .limit(1000)
    .execute();
  return rows.map((row) => millis(row.failed_at));
}

import type { Kysely } from 'kysely';
import type { DashboardSession } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { millis } from '../task-row.js';

/** A session that has not expired at `now`. */
export async function findSession(
  db: Kysely<Database>,
  tokenHash: string,
  now: number,
): Promise<DashboardSession | undefined> {
  const row = await db
    .selectFrom('dashboard_sessions')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return (
    row && {
      tokenHash: row.token_hash,
      accountId: row.account_id,
      csrfToken: row.csrf_token,
      environment: row.environment,
      createdAt: millis(row.created_at),
      expiresAt: millis(row.expires_at),
    }
  );
}

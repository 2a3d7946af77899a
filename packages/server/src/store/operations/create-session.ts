import type { Kysely } from 'kysely';
import type { DashboardSession } from '../../ports/store.js';
import type { Database } from '../database-schema.js';

/** Stores a new session and drops expired ones (of anyone): sign-ins are rare enough to carry the sweep. */
export async function createSession(
  db: Kysely<Database>,
  session: Omit<DashboardSession, 'createdAt'>,
  now: number,
): Promise<DashboardSession> {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('dashboard_sessions').where('expires_at', '<=', now).execute();
    await trx
      .insertInto('dashboard_sessions')
      .values({
        token_hash: session.tokenHash,
        account_id: session.accountId,
        csrf_token: session.csrfToken,
        environment: session.environment,
        created_at: now,
        expires_at: session.expiresAt,
      })
      .execute();
  });
  return { ...session, createdAt: now };
}

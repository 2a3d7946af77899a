import type { Kysely } from 'kysely';
import type { Database } from '../database-schema.js';

/**
 * Replaces the password hash of the account that `email` owns, in one transaction with ending every session
 * of that account (whoever knew the old password is signed out) and forgetting the email's failed sign-ins
 * (a reset lifts a lockout). False when no account has that owner.
 */
export async function setOwnerPassword(
  db: Kysely<Database>,
  email: string,
  passwordHash: string,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const account = await trx
      .updateTable('accounts')
      .set({ password_hash: passwordHash })
      .where('email', '=', email)
      .returning('id')
      .executeTakeFirst();
    if (!account) return false;
    await trx.deleteFrom('dashboard_sessions').where('account_id', '=', account.id).execute();
    await trx.deleteFrom('sign_in_failures').where('email', '=', email).execute();
    return true;
  });
}

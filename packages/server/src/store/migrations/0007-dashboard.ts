/**
 * The account dashboard: an owner (email and argon2id password hash) per account, sign-in sessions,
 * failed sign-ins (for rate limiting across API processes), and an expiry on API keys for rotation's grace
 * period.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('accounts').addColumn('email', 'text').execute();
  await db.schema.alterTable('accounts').addColumn('password_hash', 'text').execute();
  await db.schema.createIndex('accounts_email').on('accounts').column('email').unique().execute();
  await db.schema.alterTable('api_keys').addColumn('expires_at', 'bigint').execute();
  await db.schema
    .createTable('dashboard_sessions')
    // SHA-256 of the cookie's token: a leaked table does not sign anyone in.
    .addColumn('token_hash', 'text', (col) => col.primaryKey())
    .addColumn('account_id', 'text', (col) => col.notNull())
    .addColumn('csrf_token', 'text', (col) => col.notNull())
    .addColumn('environment', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('expires_at', 'bigint', (col) => col.notNull())
    .execute();
  await db.schema
    .createIndex('dashboard_sessions_expiry')
    .on('dashboard_sessions')
    .column('expires_at')
    .execute();
  await db.schema
    .createTable('sign_in_failures')
    .addColumn('email', 'text', (col) => col.notNull())
    .addColumn('failed_at', 'bigint', (col) => col.notNull())
    .execute();
  await db.schema
    .createIndex('sign_in_failures_email')
    .on('sign_in_failures')
    .columns(['email', 'failed_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('sign_in_failures').execute();
  await db.schema.dropTable('dashboard_sessions').execute();
  await db.schema.alterTable('api_keys').dropColumn('expires_at').execute();
  await db.schema.dropIndex('accounts_email').execute();
  await db.schema.alterTable('accounts').dropColumn('password_hash').execute();
  await db.schema.alterTable('accounts').dropColumn('email').execute();
}

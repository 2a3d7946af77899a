/**
 * Callbacks: per-account signing secrets, the delivery outbox and its attempt log. Accounts made before this
 * migration get their first secret here.
 */
import { type Kysely, sql } from 'kysely';
import { newWebhookSecret } from '../../domain/identifiers.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webhook_secrets')
    .addColumn('secret', 'text', (col) => col.primaryKey())
    .addColumn('account_id', 'text', (col) => col.notNull().references('accounts.id'))
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    // Null for the current secret; set when a rotation retires it, which keeps it signing until then.
    .addColumn('expires_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('webhook_secrets_account')
    .on('webhook_secrets')
    .columns(['account_id', 'created_at'])
    .execute();

  const now = Date.now();
  const accounts = await sql<{ id: string }>`select id from accounts`.execute(db);
  for (const { id } of accounts.rows) {
    await sql`insert into webhook_secrets (secret, account_id, created_at) values (${newWebhookSecret()}, ${id}, ${now})`.execute(
      db,
    );
  }

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('task_id', 'text', (col) => col.notNull().references('tasks.id'))
    .addColumn('account_id', 'text', (col) => col.notNull().references('accounts.id'))
    .addColumn('event', 'text', (col) => col.notNull())
    .addColumn('url', 'text', (col) => col.notNull())
    .addColumn('host', 'text', (col) => col.notNull())
    .addColumn('payload', 'text', (col) => col.notNull())
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('attempt_count', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint')
    .addColumn('lease_owner', 'text')
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('updated_at', 'bigint', (col) => col.notNull())
    .execute();
  // The dispatcher claims due deliveries oldest first; the log lists a task's deliveries.
  await db.schema
    .createIndex('webhook_deliveries_due')
    .on('webhook_deliveries')
    .columns(['status', 'next_attempt_at'])
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_task')
    .on('webhook_deliveries')
    .columns(['task_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('delivery_id', 'text', (col) => col.notNull().references('webhook_deliveries.id'))
    .addColumn('number', 'integer', (col) => col.notNull())
    .addColumn('attempted_at', 'bigint', (col) => col.notNull())
    .addColumn('duration_ms', 'integer', (col) => col.notNull())
    .addColumn('http_status', 'integer')
    .addColumn('error', 'text')
    .addPrimaryKeyConstraint('webhook_attempts_pk', ['delivery_id', 'number'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['webhook_attempts', 'webhook_deliveries', 'webhook_secrets']) {
    await db.schema.dropTable(table).execute();
  }
}

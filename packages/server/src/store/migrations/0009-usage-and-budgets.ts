/**
 * Usage and budgets: one usage record per task (reserved at creation, settled at completion, deleted when the
 * task fails), kept when retention deletes the task; the API key a task was created with, so that usage can be
 * grouped by key; monthly limits on accounts and API keys.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('usage_records')
    .addColumn('task_id', 'text', (col) => col.primaryKey())
    .addColumn('account_id', 'text', (col) => col.notNull())
    // Null for a task created from the dashboard (its session, not a key).
    .addColumn('api_key_id', 'text')
    .addColumn('environment', 'text', (col) => col.notNull())
    .addColumn('model', 'text', (col) => col.notNull())
    // Null until settled: the engine is known once a worker claims the task.
    .addColumn('engine', 'text')
    .addColumn('quality', 'text', (col) => col.notNull())
    // The requested ratio until settled, then the one rendered (an `adaptive` request resolves on the worker).
    .addColumn('aspect_ratio', 'text', (col) => col.notNull())
    .addColumn('width', 'integer')
    .addColumn('height', 'integer')
    .addColumn('video_seconds', 'integer', (col) => col.notNull())
    // Micro-units of the prices' currency; null without a price for the model and quality.
    .addColumn('cost', 'bigint')
    .addColumn('state', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('settled_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('usage_records_account_time')
    .on('usage_records')
    .columns(['account_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('usage_records_key_time')
    .on('usage_records')
    .columns(['api_key_id', 'created_at'])
    .execute();
  await db.schema.alterTable('tasks').addColumn('api_key_id', 'text').execute();
  for (const table of ['accounts', 'api_keys']) {
    await db.schema.alterTable(table).addColumn('monthly_video_seconds', 'integer').execute();
    await db.schema.alterTable(table).addColumn('monthly_budget', 'bigint').execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['api_keys', 'accounts']) {
    await db.schema.alterTable(table).dropColumn('monthly_budget').execute();
    await db.schema.alterTable(table).dropColumn('monthly_video_seconds').execute();
  }
  await db.schema.alterTable('tasks').dropColumn('api_key_id').execute();
  await db.schema.dropTable('usage_records').execute();
}

/**
 * The workers that are running, each with the model IDs it serves, renewed while it runs: `GET /v1/models`
 * says a model can run now only when some live worker serves it. (0009 is usage and budgets.)
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('workers')
    .addColumn('id', 'text', (col) => col.primaryKey())
    // The model IDs it claims, as a JSON array.
    .addColumn('models', 'text', (col) => col.notNull())
    .addColumn('started_at', 'bigint', (col) => col.notNull())
    .addColumn('seen_at', 'bigint', (col) => col.notNull())
    // A worker not seen again by then is gone (killed, cut off): it serves nothing.
    .addColumn('expires_at', 'bigint', (col) => col.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('workers').execute();
}

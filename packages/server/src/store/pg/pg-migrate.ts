import { DEFAULT_MIGRATION_TABLE, type Kysely, sql } from 'kysely';
import type { Database } from '../database-schema.js';
import { isUpToDate, migrateToLatest } from '../migrations/index.js';
import { quoteIdentifier, withMigrationLock } from './pg-database.js';

/**
 * Migrates the store's schema (`schema`, or the one unqualified names resolve to). Safe with any number of
 * processes starting at once. Everything runs on one connection holding `MIGRATION_LOCK_KEY`, so the schema,
 * Kysely's migration tables and the migrations themselves are made by one process at a time and the others find
 * them done. Kysely's migrator also locks (a database-wide advisory lock, then one transaction for the pending
 * migrations), but only around the migrations: it makes its own tables beforehand, unlocked, relying on
 * catching "already exists" errors, and nothing of it makes the schema. Kysely's tables go in the store's schema
 * (`migrationTableSchema`): left to itself it would take any schema's `kysely_migration` for its own. A schema
 * whose migration table already lists every migration is left alone, unlocked: migrations are recorded in the
 * transaction that applies them.
 */
export function migratePg(db: Kysely<Database>, schema: string | undefined): Promise<void> {
  return db.connection().execute(async (connection) => {
    const name = schema ?? (await currentSchema(connection));
    // Every start and store-backed command comes here, nearly always to find nothing to do: that is two
    // reads, without queueing for the database-wide lock behind other schemas' migrations, and without
    // Kysely's reading of every table of every schema in the database.
    if (isUpToDate(await appliedMigrations(connection, name))) return;
    await withMigrationLock(connection, async () => {
      // Only when missing: CREATE SCHEMA IF NOT EXISTS needs the CREATE privilege even when the schema exists.
      const found = await sql`select 1 from pg_namespace where nspname = ${name}`.execute(connection);
      if (found.rows.length === 0) await sql`create schema ${sql.id(name)}`.execute(connection);
      await migrateToLatest(connection, { migrationTableSchema: name });
    });
  });
}

/** The names in the schema's Kysely migration table, none when it has none. */
async function appliedMigrations(db: Kysely<Database>, schema: string): Promise<string[]> {
  const name = `${quoteIdentifier(schema)}.${quoteIdentifier(DEFAULT_MIGRATION_TABLE)}`;
  const table = await sql<{ found: boolean }>`select to_regclass(${name}) is not null as found`.execute(db);
  if (!table.rows[0]?.found) return [];
  const query = sql<{ name: string }>`select name from ${sql.id(schema, DEFAULT_MIGRATION_TABLE)}`;
  return (await query.execute(db)).rows.map((row) => row.name);
}

/** The schema unqualified names resolve to (normally `public`). */
export async function currentSchema(db: Kysely<Database>): Promise<string> {
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
  const schema = rows[0]?.schema;
  if (!schema) throw new Error('No schema on the search_path exists; set one, or give the store a schema.');
  return schema;
}

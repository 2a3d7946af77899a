import { type Kysely, sql } from 'kysely';
import type { Database } from '../database-schema.js';
import { migrateToLatest } from '../migrations/index.js';
import { TEMP_STORE } from './sqlite-database.js';
import { OPTIMIZE_ALL_TABLES } from './sqlite-statistics.js';

/**
 * Kysely runs SQLite migrations outside any transaction and without a lock, so a crash halfway would leave
 * a half-built schema, and two processes starting together (the server and `videogen keys create`) race.
 * One `BEGIN IMMEDIATE` around the whole run fixes both: it waits (up to `busy_timeout`) for any other
 * writer, and SQLite's DDL rolls back with everything else. The run holds the store's one connection
 * throughout, so every statement of it, and no other, happens inside this transaction.
 */
export function migrateSqlite(db: Kysely<Database>): Promise<void> {
  return db.connection().execute(async (connection) => {
    await sql`pragma temp_store = FILE`.execute(connection);
    try {
      await sql`begin immediate`.execute(connection);
      try {
        await migrateToLatest(connection);
      } catch (error) {
        // SQLite may have rolled back already (it does on some errors); the migration's error is the news.
        await sql`rollback`.execute(connection).catch(() => undefined);
        throw error;
      }
      await sql`commit`.execute(connection);
    } finally {
      // Outside the transaction: SQLite changes where temporary data goes only between transactions. Failing
      // (a transaction left open by a failed commit, whose error is the news) leaves files: slower, not wrong.
      await sql
        .raw(`pragma temp_store = ${TEMP_STORE}`)
        .execute(connection)
        .catch(() => undefined);
    }
    // New tables and indexes have no statistics yet; statistics only help the planner, so a failure is not.
    await sql
      .raw(`pragma ${OPTIMIZE_ALL_TABLES}`)
      .execute(connection)
      .catch(() => undefined);
  });
}

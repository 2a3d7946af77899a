import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { Kysely } from 'kysely';
import type { Database } from '../database-schema.js';
import { BACKSTOP_CHECKPOINT_PAGES } from './sqlite-checkpointer.js';
import { openDatabase, pragma } from './sqlite-handles.js';
import { limitPageCache } from './sqlite-page-cache.js';
import { StatementCache } from './sqlite-statement-cache.js';
import { optimizeOnOpen } from './sqlite-statistics.js';
import { enableWal } from './sqlite-wal-mode.js';
import { SqliteWriteDialect } from './sqlite-write-dialect.js';

/** A file path that names no file: the database lives in this connection only. */
export const isInMemory = (path: string) => path === ':memory:' || path === '';

export const BUSY_TIMEOUT_MS = 5000;
/** Where SQLite keeps temporary data (statement journals, sorts) outside migrations; see openSqliteDatabase. */
export const TEMP_STORE = 'MEMORY';

/**
 * The store's one writing connection, set up (WAL, busy wait, foreign keys, page cache, temporary data in
 * memory, statistics), and the Kysely instance over it.
 */
export function openSqliteDatabase(
  path: string,
  checkpointInBackground: boolean,
  onError?: (error: unknown) => void,
): { db: Kysely<Database>; database: BetterSqlite3.Database; statements: StatementCache } {
  if (!isInMemory(path)) mkdirSync(dirname(path), { recursive: true });
  const database = openDatabase(path);
  // better-sqlite3 waits synchronously, so a busy wait stalls the event loop: keep writes short.
  pragma(database, `busy_timeout = ${BUSY_TIMEOUT_MS}`);
  enableWal(database, BUSY_TIMEOUT_MS);
  pragma(database, 'foreign_keys = ON');
  pragma(database, 'synchronous = NORMAL');
  limitPageCache(database);
  // A group of creations checking limits (group-commit.ts) gives each its savepoint, and SQLite copies the pages
  // a savepoint changes that earlier writes of the transaction had already changed into a statement journal,
  // which past 64 KiB spills to a temporary file: one file created, written page by page and deleted per group
  // commit (20 creations: ~30 writes a creation, half the store's system time). In memory, it is a copy (tens of
  // KiB at a time); migrate() sets files again for its run, whose index builds may sort a whole table.
  pragma(database, `temp_store = ${TEMP_STORE}`);
  if (checkpointInBackground) pragma(database, `wal_autocheckpoint = ${BACKSTOP_CHECKPOINT_PAGES}`);
  try {
    optimizeOnOpen(database);
  } catch (error) {
    // Statistics only help the planner: a database busy with another writer opens without fresh ones.
    onError?.(new Error(`PRAGMA optimize on open: ${error instanceof Error ? error.message : error}`));
  }
  const statements = new StatementCache(database);
  return {
    db: new Kysely<Database>({ dialect: new SqliteWriteDialect(statements) }),
    database,
    statements,
  };
}

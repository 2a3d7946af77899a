/** The `Store` on one SQLite file (or `:memory:`), through Kysely over better-sqlite3. */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { Kysely, sql } from 'kysely';
import type { TaskRecord, TaskScope } from '../domain/task.js';
import type { NewTask, WorkerLock } from '../ports/store.js';
import type { Database } from './database-schema.js';
import { KyselyStore } from './kysely-store.js';
import { migrateToLatest } from './migrations/index.js';
import { readTask } from './operations/get-task.js';
import { readTasks } from './operations/get-tasks.js';
import { BACKSTOP_CHECKPOINT_PAGES, type Checkpointer, startCheckpointer } from './sqlite-checkpointer.js';
import { sqliteCreationGroups } from './sqlite-creation-groups.js';
import { openDatabase, pragma } from './sqlite-handles.js';
import { limitPageCache } from './sqlite-page-cache.js';
import { SqliteReader } from './sqlite-reader.js';
import { SqliteStatements } from './sqlite-statements.js';
import { OPTIMIZE_ALL_TABLES, optimizeOnOpen, optimizePeriodically } from './sqlite-statistics.js';
import { enableWal } from './sqlite-wal-mode.js';
import { SqliteWriteDialect } from './sqlite-write-dialect.js';
import { StatementCache } from './statement-cache.js';
import type { StatementGroups } from './statement-groups.js';

export interface SqliteStoreOptions {
  /** A file path, or `:memory:`. */
  readonly path: string;
  /** Epoch milliseconds; injectable so lease expiry can be tested without waiting. */
  readonly now?: () => number;
  /**
   * Checkpoint the WAL from a worker thread rather than in commits on the event loop (sqlite-checkpointer.ts):
   * for the server, whose requests commit; a file only.
   */
  readonly checkpointInBackground?: boolean;
  /** Told when a background checkpoint fails (the backstop keeps the WAL bounded). */
  readonly onError?: (error: unknown) => void;
}

const isInMemory = (path: string) => path === ':memory:' || path === '';

const BUSY_TIMEOUT_MS = 5000;
/** Where SQLite keeps temporary data (statement journals, sorts) outside migrations; see openSqlite. */
export const TEMP_STORE = 'MEMORY';

function openSqlite(
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

export class SqliteStore extends KyselyStore {
  readonly #checkpointer: Checkpointer | undefined;
  readonly #optimizer: { stop(): void };
  /** Creations arriving together share one commit (sqlite-creation-groups.ts). */
  readonly #creations: StatementGroups<NewTask, TaskRecord>;
  readonly #statements: StatementCache;
  /** Polls read here (sqlite-reader.ts); absent in memory. */
  readonly #reader: SqliteReader | undefined;

  constructor(options: SqliteStoreOptions) {
    const inBackground = (options.checkpointInBackground ?? false) && !isInMemory(options.path);
    const { db, database, statements } = openSqlite(options.path, inBackground, options.onError);
    super(db, { skipLocked: false, ...(options.now ? { now: options.now } : {}) });
    this.#statements = statements;
    this.#reader = isInMemory(options.path) ? undefined : new SqliteReader(options.path, BUSY_TIMEOUT_MS);
    this.#checkpointer = inBackground
      ? startCheckpointer(options.path, {
          onError: (message) => options.onError?.(new Error(`WAL checkpoint: ${message}`)),
        })
      : undefined;
    this.#optimizer = optimizePeriodically(() => this.#optimize(), {
      onError: (error) => options.onError?.(error),
    });
    this.#creations = sqliteCreationGroups(
      this.db,
      { database, statements: new SqliteStatements(statements, this.db) },
      () => this.now(),
    );
  }

  /**
   * How many distinct SQL strings the store has prepared, each kept until its thread ends (sqlite-handles.ts):
   * for tests, which check that the data's sizes add none.
   */
  get preparedStatements(): number {
    return this.#statements.size + (this.#reader?.preparedStatements ?? 0);
  }

  override async getTask(id: string, scope?: TaskScope): Promise<TaskRecord | undefined> {
    return this.#reader ? readTask(this.#reader, id, scope) : super.getTask(id, scope);
  }

  override async getTasks(ids: readonly string[]): Promise<Map<string, TaskRecord>> {
    return this.#reader ? readTasks(this.#reader, ids) : super.getTasks(ids);
  }

  override createTask(task: NewTask): Promise<TaskRecord> {
    return this.#creations.submit(task);
  }

  /**
   * Kysely runs SQLite migrations outside any transaction and without a lock, so a crash halfway would leave
   * a half-built schema, and two processes starting together (the server and `videogen keys create`) race.
   * One `BEGIN IMMEDIATE` around the whole run fixes both: it waits (up to `busy_timeout`) for any other
   * writer, and SQLite's DDL rolls back with everything else. The run holds the store's one connection
   * throughout, so every statement of it, and no other, happens inside this transaction.
   */
  migrate(): Promise<void> {
    return this.db.connection().execute(async (db) => {
      await sql`pragma temp_store = FILE`.execute(db);
      try {
        await sql`begin immediate`.execute(db);
        try {
          await migrateToLatest(db);
        } catch (error) {
          // SQLite may have rolled back already (it does on some errors); the migration's error is the news.
          await sql`rollback`.execute(db).catch(() => undefined);
          throw error;
        }
        await sql`commit`.execute(db);
      } finally {
        // Outside the transaction: SQLite changes where temporary data goes only between transactions. Failing
        // (a transaction left open by a failed commit, whose error is the news) leaves files: slower, not wrong.
        await sql
          .raw(`pragma temp_store = ${TEMP_STORE}`)
          .execute(db)
          .catch(() => undefined);
      }
      // New tables and indexes have no statistics yet; statistics only help the planner, so a failure is not.
      await sql
        .raw(`pragma ${OPTIMIZE_ALL_TABLES}`)
        .execute(db)
        .catch(() => undefined);
    });
  }

  async #optimize(): Promise<void> {
    await sql`pragma optimize`.execute(this.db);
  }

  /** One machine: a restart finds the tasks of the process it replaces by its pid (runner/gone-workers.ts). */
  async holdWorkerLock(): Promise<WorkerLock> {
    return { release: async () => {} };
  }

  async close(): Promise<void> {
    await this.#creations.drain();
    this.#optimizer.stop();
    // What SQLite recommends before a connection closes; its statistics are only an aid, so a failure is not.
    await this.#optimize().catch(() => undefined);
    await this.#checkpointer?.close();
    await this.db.destroy();
    this.#reader?.close();
  }
}

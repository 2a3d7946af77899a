/** The `Store` on one SQLite file (or `:memory:`), through Kysely over better-sqlite3. */
import { sql } from 'kysely';
import type { WorkerLock } from '../../ports/store.js';
import { KyselyStore } from '../kysely-store.js';
import { type Checkpointer, startCheckpointer } from './sqlite-checkpointer.js';
import { sqliteCreations } from './sqlite-creations.js';
import { BUSY_TIMEOUT_MS, isInMemory, openSqliteDatabase } from './sqlite-database.js';
import { migrateSqlite } from './sqlite-migrate.js';
import { SqliteReader } from './sqlite-reader.js';
import type { StatementCache } from './sqlite-statement-cache.js';
import { SqliteStatements } from './sqlite-statements.js';
import { optimizePeriodically } from './sqlite-statistics.js';
import { sqliteTaskReads } from './sqlite-task-reads.js';

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

export class SqliteStore extends KyselyStore {
  readonly #checkpointer: Checkpointer | undefined;
  readonly #optimizer: { stop(): void };
  readonly #statements: StatementCache;
  /** Polls read here (sqlite-reader.ts); absent in memory. */
  readonly #reader: SqliteReader | undefined;

  constructor(options: SqliteStoreOptions) {
    const inBackground = (options.checkpointInBackground ?? false) && !isInMemory(options.path);
    const { db, database, statements } = openSqliteDatabase(options.path, inBackground, options.onError);
    const reader = isInMemory(options.path) ? undefined : new SqliteReader(options.path, BUSY_TIMEOUT_MS);
    super(db, {
      skipLocked: false,
      // Creations arriving together share one commit.
      creations: sqliteCreations(db, { database, statements: new SqliteStatements(statements, db) }),
      reads: sqliteTaskReads(db, reader),
      ...(options.now ? { now: options.now } : {}),
    });
    this.#statements = statements;
    this.#reader = reader;
    this.#checkpointer = inBackground
      ? startCheckpointer(options.path, {
          onError: (message) => options.onError?.(new Error(`WAL checkpoint: ${message}`)),
        })
      : undefined;
    this.#optimizer = optimizePeriodically(() => this.#optimize(), {
      onError: (error) => options.onError?.(error),
    });
  }

  /**
   * How many distinct SQL strings the store has prepared, each kept until its thread ends (sqlite-handles.ts):
   * for tests, which check that the data's sizes add none.
   */
  get preparedStatements(): number {
    return this.#statements.size + (this.#reader?.preparedStatements ?? 0);
  }

  migrate(): Promise<void> {
    return migrateSqlite(this.db);
  }

  async #optimize(): Promise<void> {
    await sql`pragma optimize`.execute(this.db);
  }

  /** One machine: a restart finds the tasks of the process it replaces by its pid (runner/gone-workers.ts). */
  async holdWorkerLock(): Promise<WorkerLock> {
    return { release: async () => {} };
  }

  protected async closeDatabase(): Promise<void> {
    this.#optimizer.stop();
    // What SQLite recommends before a connection closes; its statistics are only an aid, so a failure is not.
    await this.#optimize().catch(() => undefined);
    await this.#checkpointer?.close();
    await this.db.destroy();
    this.#reader?.close();
  }
}

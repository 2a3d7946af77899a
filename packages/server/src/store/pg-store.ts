/**
 * The `Store` on PostgreSQL, through Kysely over a `pg.Pool`: the same operation modules and migrations as
 * SQLite, with claims taken `FOR UPDATE SKIP LOCKED` so that any number of processes can share the queue and
 * the callback outbox.
 */
import { DEFAULT_MIGRATION_TABLE, type Kysely, sql } from 'kysely';
import type { TaskRecord, TaskScope } from '../domain/task.js';
import type { IdempotentCreation, NewTask, WorkerLock } from '../ports/store.js';
import type { Database } from './database-schema.js';
import { KyselyStore } from './kysely-store.js';
import { isUpToDate, migrateToLatest } from './migrations/index.js';
import { createTask } from './operations/create-task.js';
import { createTaskOnce } from './operations/create-task-once.js';
import { createUnlimitedTaskOnce } from './operations/create-unlimited-task-once.js';
import { type Creation, pgCreationGroups } from './pg-creation-groups.js';
import {
  openPgDatabase,
  type PgDatabase,
  type PgDatabaseOptions,
  quoteIdentifier,
  withMigrationLock,
} from './pg-database.js';
import { pgTaskReads, type TaskRead } from './pg-task-reads.js';
import { PgWorkSignal, type PgWorkSignalOptions } from './pg-work-signal.js';
import { holdPgWorkerLock } from './pg-worker-lock.js';
import type { StatementGroups } from './statement-groups.js';

export interface PgStoreOptions extends PgDatabaseOptions {
  /** Epoch milliseconds; injectable so lease expiry can be tested without waiting. */
  readonly now?: () => number;
}

/**
 * Claims commit through a pool of their own with `synchronous_commit = off`: a claim is acknowledged once
 * PostgreSQL has it in memory, a flush to disk (about 1 ms here) earlier. That is safe because a claim is
 * fenced: if the server crashes before the claim reaches disk, the task is back as it was (pending, or expired
 * with the attempt before) and is claimed again. Claimed by another pool, every write of the lost claim's run
 * (lease, progress, completion, failure) names a worker that no longer holds it and changes nothing; claimed by
 * the same pool with the same attempt number, the two runs share the claim, and the first to complete or fail
 * ends the task (either needs it `processing`), the other's writes then changing nothing. The work may be done
 * twice; the task is neither lost nor finished twice. The claim's `task.processing` delivery commits with it or
 * not at all. Any later ordinary commit (creation, completion) flushes the WAL up to itself, so only the last
 * few hundred milliseconds of claims before a crash are ever at risk. Creation, completion and failure keep
 * waiting for the disk, so a created or completed task survives a crash.
 */
const CLAIM_POOL_SIZE = 4;

export class PgStore extends KyselyStore {
  readonly #pool: PgDatabase['pool'];
  readonly #claims: PgDatabase;
  readonly #options: PgStoreOptions;
  readonly #creations: StatementGroups<Creation, TaskRecord | undefined>;
  readonly #reads: StatementGroups<TaskRead, TaskRecord | undefined>;

  constructor(options: PgStoreOptions) {
    const { db, pool } = openPgDatabase(options);
    const claims = openPgDatabase({
      ...options,
      poolSize: CLAIM_POOL_SIZE,
      applicationName: `${options.applicationName ?? 'videogen'}-claims`,
      asynchronousCommit: true,
    });
    super(db, { skipLocked: true, claimDb: claims.db, ...(options.now ? { now: options.now } : {}) });
    this.#pool = pool;
    this.#claims = claims;
    this.#options = options;
    this.#creations = pgCreationGroups(this.db);
    this.#reads = pgTaskReads(this.db);
  }

  /** With the reads arriving beside it, in one statement (pg-task-reads.ts). */
  override getTask(id: string, scope?: TaskScope): Promise<TaskRecord | undefined> {
    return this.#reads.submit(scope ? { id, scope } : { id });
  }

  /**
   * In one statement with the creations arriving beside it (pg-creation-groups.ts) when no monthly limit
   * applies (operations/create-unlimited-task.ts says why that keeps the transaction's guarantees); otherwise in
   * the transaction that checks the limits.
   */
  override async createTask(task: NewTask): Promise<TaskRecord> {
    const now = this.now();
    return (await this.#creations.submit({ task, now })) ?? createTask(this.db, task, now, true);
  }

  /** In one statement when the key is new and no monthly limit applies; otherwise in the transaction. */
  override async createTaskOnce(
    task: NewTask,
    idempotency: { readonly key: string; readonly requestHash: string; readonly since: number },
  ): Promise<IdempotentCreation> {
    const now = this.now();
    const created = await createUnlimitedTaskOnce(this.db, task, idempotency, now);
    return created
      ? { outcome: 'created', task: created }
      : createTaskOnce(this.db, task, idempotency, now, true);
  }

  /**
   * Safe with any number of processes starting at once. Everything runs on one connection holding
   * `MIGRATION_LOCK_KEY`, so the schema, Kysely's migration tables and the migrations themselves are made by
   * one process at a time and the others find them done. Kysely's migrator also locks (a database-wide
   * advisory lock, then one transaction for the pending migrations), but only around the migrations: it makes
   * its own tables beforehand, unlocked, relying on catching "already exists" errors, and nothing of it makes
   * the schema. Kysely's tables go in the store's schema (`migrationTableSchema`): left to itself it would
   * take any schema's `kysely_migration` for its own. A schema whose migration table already lists every
   * migration is left alone, unlocked: migrations are recorded in the transaction that applies them.
   */
  migrate(): Promise<void> {
    return this.db.connection().execute(async (db) => {
      const schema = this.#options.schema ?? (await currentSchema(db));
      // Every start and store-backed command comes here, nearly always to find nothing to do: that is two
      // reads, without queueing for the database-wide lock behind other schemas' migrations, and without
      // Kysely's reading of every table of every schema in the database.
      if (isUpToDate(await appliedMigrations(db, schema))) return;
      await withMigrationLock(db, async () => {
        // Only when missing: CREATE SCHEMA IF NOT EXISTS needs the CREATE privilege even when the schema exists.
        const found = await sql`select 1 from pg_namespace where nspname = ${schema}`.execute(db);
        if (found.rows.length === 0) await sql`create schema ${sql.id(schema)}`.execute(db);
        await migrateToLatest(db, { migrationTableSchema: schema });
      });
    });
  }

  /**
   * A `PgWorkSignal` for the processes sharing this store: it notifies through this store's pool and keeps its
   * channels to this store's schema. Close it before the store, whose `close` ends the pool.
   */
  createWorkSignal(
    options: Omit<PgWorkSignalOptions, 'connectionString' | 'pool' | 'namespace'> = {},
  ): PgWorkSignal {
    return new PgWorkSignal({
      ...options,
      connectionString: this.#options.connectionString,
      pool: this.#pool,
      ...(this.#options.schema !== undefined && { namespace: this.#options.schema }),
    });
  }

  async holdWorkerLock(workerId: string): Promise<WorkerLock> {
    const schema = this.#options.schema ?? (await currentSchema(this.db));
    return holdPgWorkerLock(
      {
        connectionString: this.#options.connectionString,
        schema,
        ...(this.#options.onError && { onError: this.#options.onError }),
      },
      workerId,
    );
  }

  async close(): Promise<void> {
    await Promise.all([this.#creations.drain(), this.#reads.drain()]);
    await this.#claims.db.destroy();
    await this.db.destroy();
    // Kysely ends the pool only if it ever used it; a work signal may have used it alone.
    if (!this.#pool.ending) await this.#pool.end();
  }
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
async function currentSchema(db: Kysely<Database>): Promise<string> {
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
  const schema = rows[0]?.schema;
  if (!schema) throw new Error('No schema on the search_path exists; set one, or give the store a schema.');
  return schema;
}

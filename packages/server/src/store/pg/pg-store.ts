/**
 * The `Store` on PostgreSQL, through Kysely over a `pg.Pool`: the same operation modules and migrations as
 * SQLite, with claims taken `FOR UPDATE SKIP LOCKED` so that any number of processes can share the queue and
 * the callback outbox.
 */
import type { WorkerLock } from '../../ports/store.js';
import { KyselyStore } from '../kysely-store.js';
import { pgCreations } from './pg-creations.js';
import { openPgDatabase, type PgDatabase, type PgDatabaseOptions } from './pg-database.js';
import { currentSchema, migratePg } from './pg-migrate.js';
import { pgTaskReads } from './pg-task-reads.js';
import { PgWorkSignal, type PgWorkSignalOptions } from './pg-work-signal.js';
import { holdPgWorkerLock } from './pg-worker-lock.js';

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

  constructor(options: PgStoreOptions) {
    const { db, pool } = openPgDatabase(options);
    const claims = openPgDatabase({
      ...options,
      poolSize: CLAIM_POOL_SIZE,
      applicationName: `${options.applicationName ?? 'videogen'}-claims`,
      asynchronousCommit: true,
    });
    super(db, {
      skipLocked: true,
      claimDb: claims.db,
      creations: pgCreations(db),
      reads: pgTaskReads(db),
      ...(options.now ? { now: options.now } : {}),
    });
    this.#pool = pool;
    this.#claims = claims;
    this.#options = options;
  }

  migrate(): Promise<void> {
    return migratePg(this.db, this.#options.schema);
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

  protected async closeDatabase(): Promise<void> {
    await this.#claims.db.destroy();
    await this.db.destroy();
    // Kysely ends the pool only if it ever used it; a work signal may have used it alone.
    if (!this.#pool.ending) await this.#pool.end();
  }
}

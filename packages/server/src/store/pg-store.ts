/**
 * The `Store` on PostgreSQL, through Kysely over a `pg.Pool`: the same operation modules and migrations as
 * SQLite, with claims taken `FOR UPDATE SKIP LOCKED` so that any number of processes can share the queue and
 * the callback outbox.
 */
import { type Kysely, sql } from 'kysely';
import type {
  DeliveryAttempt,
  DeliveryRecord,
  DeliveryWithAttempts,
  NewDelivery,
} from '../domain/delivery.js';
import type { TaskError, TaskRecord, TaskScope } from '../domain/task.js';
import type {
  Account,
  ApiKeyRecord,
  Claim,
  ClaimOptions,
  DeliveryClaim,
  DeliveryClaimOptions,
  DeliveryOutcome,
  NewApiKey,
  NewTask,
  QueueStats,
  Store,
  WebhookSecret,
} from '../ports/store.js';
import type { Database } from './database-schema.js';
import { migrateToLatest } from './migrations/index.js';
import { claimDeliveries } from './operations/claim-deliveries.js';
import { claimTask } from './operations/claim-task.js';
import { completeTask } from './operations/complete-task.js';
import { countAccounts } from './operations/count-accounts.js';
import { countPendingTasks } from './operations/count-pending-tasks.js';
import { createAccount } from './operations/create-account.js';
import { createApiKey } from './operations/create-api-key.js';
import { createDelivery } from './operations/create-delivery.js';
import { createTask } from './operations/create-task.js';
import { failAbandonedTasks } from './operations/fail-abandoned-tasks.js';
import { failTask } from './operations/fail-task.js';
import { findActiveApiKey } from './operations/find-active-api-key.js';
import { finishDeliveryAttempt } from './operations/finish-delivery-attempt.js';
import { getOrCreateSecret } from './operations/get-or-create-secret.js';
import { getTask } from './operations/get-task.js';
import { getWebhookSecrets } from './operations/get-webhook-secrets.js';
import { listApiKeys } from './operations/list-api-keys.js';
import { listDeliveries } from './operations/list-deliveries.js';
import { ping } from './operations/ping.js';
import { queueStats } from './operations/queue-stats.js';
import { releaseDelivery } from './operations/release-delivery.js';
import { releaseTask } from './operations/release-task.js';
import { renewLease } from './operations/renew-lease.js';
import { reportProgress } from './operations/report-progress.js';
import { revokeApiKey } from './operations/revoke-api-key.js';
import { rotateWebhookSecret } from './operations/rotate-webhook-secret.js';
import { touchApiKey } from './operations/touch-api-key.js';
import { openPgDatabase, type PgDatabase, type PgDatabaseOptions, withMigrationLock } from './pg-database.js';
import { PgWorkSignal, type PgWorkSignalOptions } from './pg-work-signal.js';

export interface PgStoreOptions extends PgDatabaseOptions {
  /** Epoch milliseconds; injectable so lease expiry can be tested without waiting. */
  readonly now?: () => number;
}

export class PgStore implements Store {
  readonly #db: Kysely<Database>;
  readonly #pool: PgDatabase['pool'];
  readonly #options: PgStoreOptions;
  readonly #now: () => number;

  constructor(options: PgStoreOptions) {
    const { db, pool } = openPgDatabase(options);
    this.#db = db;
    this.#pool = pool;
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Safe with any number of processes starting at once. Everything runs on one connection holding
   * `MIGRATION_LOCK_KEY`, so the schema, Kysely's migration tables and the migrations themselves are made by
   * one process at a time and the others find them done. Kysely's migrator also locks (a database-wide
   * advisory lock, then one transaction for the pending migrations), but only around the migrations: it makes
   * its own tables beforehand, unlocked, relying on catching "already exists" errors, and nothing of it makes
   * the schema. Kysely's tables go in the store's schema (`migrationTableSchema`): left to itself it would
   * take any schema's `kysely_migration` for its own.
   */
  migrate(): Promise<void> {
    return this.#db.connection().execute((db) =>
      withMigrationLock(db, async () => {
        const schema = this.#options.schema ?? (await currentSchema(db));
        // Only when missing: CREATE SCHEMA IF NOT EXISTS needs the CREATE privilege even when the schema exists.
        const found = await sql`select 1 from pg_namespace where nspname = ${schema}`.execute(db);
        if (found.rows.length === 0) await sql`create schema ${sql.id(schema)}`.execute(db);
        await migrateToLatest(db, { migrationTableSchema: schema });
      }),
    );
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

  async close(): Promise<void> {
    await this.#db.destroy();
    // Kysely ends the pool only if it ever used it; a work signal may have used it alone.
    if (!this.#pool.ending) await this.#pool.end();
  }

  ping(): Promise<void> {
    return ping(this.#db);
  }

  createAccount(): Promise<Account> {
    return createAccount(this.#db, this.#now());
  }

  countAccounts(): Promise<number> {
    return countAccounts(this.#db);
  }

  getOrCreateSecret(name: string, generate: () => string): Promise<string> {
    return getOrCreateSecret(this.#db, name, generate, this.#now());
  }

  createApiKey(key: NewApiKey): Promise<ApiKeyRecord> {
    return createApiKey(this.#db, key, this.#now());
  }

  findActiveApiKey(hash: string): Promise<ApiKeyRecord | undefined> {
    return findActiveApiKey(this.#db, hash);
  }

  listApiKeys(accountId?: string): Promise<ApiKeyRecord[]> {
    return listApiKeys(this.#db, accountId);
  }

  revokeApiKey(idOrPrefix: string): Promise<boolean> {
    return revokeApiKey(this.#db, idOrPrefix, this.#now());
  }

  touchApiKey(id: string, at: number): Promise<void> {
    return touchApiKey(this.#db, id, at);
  }

  createTask(task: NewTask): Promise<TaskRecord> {
    return createTask(this.#db, task, this.#now());
  }

  getTask(id: string, scope?: TaskScope): Promise<TaskRecord | undefined> {
    return getTask(this.#db, id, scope);
  }

  claimTask(options: ClaimOptions & { maxAttempts: number }): Promise<TaskRecord | undefined> {
    return claimTask(this.#db, { ...options, skipLocked: true }, this.#now());
  }

  failAbandonedTasks(maxAttempts: number): Promise<number> {
    return failAbandonedTasks(this.#db, maxAttempts, this.#now());
  }

  renewLease(claim: Claim, leaseMs: number): Promise<boolean> {
    return renewLease(this.#db, claim, leaseMs, this.#now());
  }

  reportProgress(claim: Claim, progress: number): Promise<boolean> {
    return reportProgress(this.#db, claim, progress, this.#now());
  }

  completeTask(claim: Claim, resultKey: string): Promise<boolean> {
    return completeTask(this.#db, claim, resultKey, this.#now());
  }

  failTask(claim: Claim, error: TaskError): Promise<boolean> {
    return failTask(this.#db, claim, error, this.#now());
  }

  releaseTask(claim: Claim): Promise<boolean> {
    return releaseTask(this.#db, claim, this.#now());
  }

  countPendingTasks(): Promise<number> {
    return countPendingTasks(this.#db);
  }

  queueStats(): Promise<QueueStats> {
    return queueStats(this.#db, this.#now());
  }

  getWebhookSecrets(accountId: string): Promise<WebhookSecret[]> {
    return getWebhookSecrets(this.#db, accountId, this.#now());
  }

  rotateWebhookSecret(accountId: string, overlapMs: number): Promise<WebhookSecret> {
    return rotateWebhookSecret(this.#db, accountId, overlapMs, this.#now());
  }

  createDelivery(delivery: NewDelivery): Promise<DeliveryRecord> {
    return createDelivery(this.#db, delivery, this.#now());
  }

  claimDeliveries(options: DeliveryClaimOptions): Promise<DeliveryRecord[]> {
    return claimDeliveries(this.#db, { ...options, skipLocked: true }, this.#now());
  }

  finishDeliveryAttempt(
    claim: DeliveryClaim,
    attempt: Omit<DeliveryAttempt, 'number'>,
    outcome: DeliveryOutcome,
  ): Promise<boolean> {
    return finishDeliveryAttempt(this.#db, claim, attempt, outcome, this.#now());
  }

  releaseDelivery(claim: DeliveryClaim): Promise<boolean> {
    return releaseDelivery(this.#db, claim, this.#now());
  }

  listDeliveries(taskId: string): Promise<DeliveryWithAttempts[]> {
    return listDeliveries(this.#db, taskId);
  }
}

/** The schema unqualified names resolve to (normally `public`). */
async function currentSchema(db: Kysely<Database>): Promise<string> {
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
  const schema = rows[0]?.schema;
  if (!schema) throw new Error('No schema on the search_path exists; set one, or give the store a schema.');
  return schema;
}

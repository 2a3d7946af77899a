/**
 * What `SqliteStore` and `PgStore` share: every `Store` operation, each a module of its own in `operations/`,
 * run on the store's `Kysely<Database>` with the store's clock, and the store's lifecycle. Each dialect's own
 * files sit side by side under the same names (`sqlite/sqlite-*.ts`, `pg/pg-*.ts`): it opens its database
 * (`-store.ts`), gives the base its ways of creating and reading tasks (`-creations.ts`, `-task-reads.ts`),
 * migrates, holds a worker's lock and closes its connections; it overrides no operation.
 */
import type { Kysely } from 'kysely';
import type {
  DeliveryAttempt,
  DeliveryRecord,
  DeliveryWithAttempts,
  NewDelivery,
} from '../domain/delivery.js';
import type { CircuitPolicy, EngineChoice, EngineRoute } from '../domain/engine-route.js';
import type { FixedAspectRatio } from '../domain/frame-size.js';
import type { ModelId } from '../domain/models.js';
import type { Environment, TaskError, TaskRecord, TaskScope } from '../domain/task.js';
import type { FileRecord } from '../domain/uploaded-file.js';
import type { UpstreamJob } from '../domain/upstream-job.js';
import type { UsageLimits } from '../domain/usage.js';
import type {
  Account,
  AccountOwner,
  ApiKeyRecord,
  ApiKeyRotation,
  CancelOutcome,
  Claim,
  ClaimOptions,
  ClaimRouting,
  DashboardSession,
  DeleteOutcome,
  DeliveryClaim,
  DeliveryClaimOptions,
  DeliveryOutcome,
  EndedUpstreamJob,
  EngineStats,
  FinishedDeliveryAttempt,
  IdempotentCreation,
  NewApiKey,
  NewTask,
  OwnerCredentials,
  QueueStats,
  RecentRunsQuery,
  Store,
  TaskList,
  TaskListQuery,
  UsageQuery,
  UsageSum,
  WebhookSecret,
  WorkerLock,
} from '../ports/store.js';
import { ActiveKeyCache } from './active-key-cache.js';
import { CircuitsCache } from './circuits-cache.js';
import type { Database } from './database-schema.js';
import { getAccountLimits, setAccountLimits } from './operations/account-limits.js';
import { cancelTask } from './operations/cancel-task.js';
import { claimDeliveries } from './operations/claim-deliveries.js';
import { claimRoutedTask } from './operations/claim-routed-task.js';
import { claimTask } from './operations/claim-task.js';
import { completeTask } from './operations/complete-task.js';
import { countAccounts } from './operations/count-accounts.js';
import { countPendingTasks } from './operations/count-pending-tasks.js';
import { createAccount } from './operations/create-account.js';
import { createApiKey } from './operations/create-api-key.js';
import { createDelivery } from './operations/create-delivery.js';
import { createFile } from './operations/create-file.js';
import { createOwnedAccount } from './operations/create-owned-account.js';
import { createSession } from './operations/create-session.js';
import { deleteExpiredFiles } from './operations/delete-expired-files.js';
import { deleteExpiredTasks } from './operations/delete-expired-tasks.js';
import { deleteSession } from './operations/delete-session.js';
import { deleteTask } from './operations/delete-task.js';
import { failAbandonedTasks } from './operations/fail-abandoned-tasks.js';
import { failTask } from './operations/fail-task.js';
import { findAccountOwner } from './operations/find-account-owner.js';
import { findActiveApiKey } from './operations/find-active-api-key.js';
import { findSession } from './operations/find-session.js';
import { findUpstreamJobTask } from './operations/find-upstream-job-task.js';
import { finishDeliveryAttempts } from './operations/finish-delivery-attempts.js';
import { getAccount } from './operations/get-account.js';
import { getFile } from './operations/get-file.js';
import { getOrCreateSecret } from './operations/get-or-create-secret.js';
import { getWebhookSecrets } from './operations/get-webhook-secrets.js';
import { listApiKeys } from './operations/list-api-keys.js';
import { listDeliveries } from './operations/list-deliveries.js';
import { listLeaseOwners } from './operations/list-lease-owners.js';
import { listLocklessWorkers } from './operations/list-lockless-workers.js';
import { listSignInFailures } from './operations/list-sign-in-failures.js';
import { listTasks } from './operations/list-tasks.js';
import { listUsage } from './operations/list-usage.js';
import { ping } from './operations/ping.js';
import { queueStats } from './operations/queue-stats.js';
import { recentRunTimes } from './operations/recent-run-times.js';
import { recordAspectRatio } from './operations/record-aspect-ratio.js';
import { recordEngineOutcome } from './operations/record-engine-outcome.js';
import { forgetSignInFailures, recordSignInFailure } from './operations/record-sign-in-failure.js';
import { recordUpstreamJob } from './operations/record-upstream-job.js';
import { registerWorker } from './operations/register-worker.js';
import { releaseDelivery } from './operations/release-delivery.js';
import { releaseTask } from './operations/release-task.js';
import { removeWorker } from './operations/remove-worker.js';
import { renewLeases } from './operations/renew-leases.js';
import { reportProgress } from './operations/report-progress.js';
import { requeueOrphanedTasks } from './operations/requeue-orphaned-tasks.js';
import { rerouteTask } from './operations/reroute-task.js';
import { revokeApiKey } from './operations/revoke-api-key.js';
import { rotateApiKey } from './operations/rotate-api-key.js';
import { rotateWebhookSecret } from './operations/rotate-webhook-secret.js';
import { circuitRecords, engineStats } from './operations/routing-snapshot.js';
import { servedModels } from './operations/served-models.js';
import { setAccountOwner } from './operations/set-account-owner.js';
import { setApiKeyLimits } from './operations/set-api-key-limits.js';
import { setOwnerPassword } from './operations/set-owner-password.js';
import { setSessionEnvironment } from './operations/set-session-environment.js';
import { takeEndedUpstreamJobs } from './operations/take-ended-upstream-jobs.js';
import { touchApiKey } from './operations/touch-api-key.js';
import type { TaskCreations } from './task-creations.js';
import { directTaskReads, type TaskReads } from './task-reads.js';

export interface KyselyStoreOptions {
  /** Epoch milliseconds; injectable so lease expiry can be tested without waiting. */
  readonly now?: () => number;
  /**
   * PostgreSQL: claims lock their candidates `FOR UPDATE SKIP LOCKED`, and so do the other takers of rows
   * (callbacks, ended upstream jobs); SQLite has one writer and no such clauses.
   */
  readonly skipLocked: boolean;
  /** Where task claims run, when not on `db` (PostgreSQL: a pool committing asynchronously, pg/pg-store.ts). */
  readonly claimDb?: Kysely<Database>;
  /** How tasks are created (pg/pg-creations.ts, sqlite/sqlite-creations.ts). */
  readonly creations: TaskCreations;
  /** How tasks are read by id, when not by the operations on `db`. */
  readonly reads?: TaskReads;
}

export abstract class KyselyStore implements Store {
  protected readonly db: Kysely<Database>;
  readonly #claimDb: Kysely<Database>;
  protected readonly now: () => number;
  readonly #skipLocked: boolean;
  readonly #activeKeys: ActiveKeyCache;
  readonly #circuits: CircuitsCache;
  readonly #creations: TaskCreations;
  readonly #reads: TaskReads;

  protected constructor(db: Kysely<Database>, options: KyselyStoreOptions) {
    this.db = db;
    this.#creations = options.creations;
    this.#reads = options.reads ?? directTaskReads(db);
    this.#claimDb = options.claimDb ?? db;
    this.now = options.now ?? Date.now;
    this.#skipLocked = options.skipLocked;
    this.#activeKeys = new ActiveKeyCache(this.now);
    this.#circuits = new CircuitsCache(() => circuitRecords(this.#claimDb), this.now);
  }

  abstract migrate(): Promise<void>;
  /** Ends the dialect's connections, once nothing the base started is left to answer. */
  protected abstract closeDatabase(): Promise<void>;

  async close(): Promise<void> {
    await Promise.all([this.#creations.drain(), this.#reads.drain()]);
    await this.closeDatabase();
  }

  ping(): Promise<void> {
    return ping(this.db);
  }

  createAccount(): Promise<Account> {
    return createAccount(this.db, this.now());
  }

  createOwnedAccount(owner: AccountOwner): Promise<Account | undefined> {
    return createOwnedAccount(this.db, owner, this.now());
  }

  setAccountOwner(accountId: string, owner: AccountOwner): Promise<boolean> {
    return setAccountOwner(this.db, accountId, owner);
  }

  getAccount(id: string): Promise<Account | undefined> {
    return getAccount(this.db, id);
  }

  findAccountOwner(email: string): Promise<OwnerCredentials | undefined> {
    return findAccountOwner(this.db, email);
  }

  setOwnerPassword(email: string, passwordHash: string): Promise<boolean> {
    return setOwnerPassword(this.db, email, passwordHash);
  }

  countAccounts(): Promise<number> {
    return countAccounts(this.db);
  }

  recordSignInFailure(email: string): Promise<void> {
    return recordSignInFailure(this.db, email, this.now());
  }

  listSignInFailures(email: string, since: number): Promise<number[]> {
    return listSignInFailures(this.db, email, since);
  }

  forgetSignInFailures(before: number): Promise<void> {
    return forgetSignInFailures(this.db, before);
  }

  createSession(session: Omit<DashboardSession, 'createdAt'>): Promise<DashboardSession> {
    return createSession(this.db, session, this.now());
  }

  findSession(tokenHash: string): Promise<DashboardSession | undefined> {
    return findSession(this.db, tokenHash, this.now());
  }

  setSessionEnvironment(tokenHash: string, environment: Environment): Promise<boolean> {
    return setSessionEnvironment(this.db, tokenHash, environment);
  }

  deleteSession(tokenHash: string): Promise<void> {
    return deleteSession(this.db, tokenHash);
  }

  getOrCreateSecret(name: string, generate: () => string): Promise<string> {
    return getOrCreateSecret(this.db, name, generate, this.now());
  }

  createApiKey(key: NewApiKey): Promise<ApiKeyRecord> {
    return createApiKey(this.db, key, this.now());
  }

  findActiveApiKey(hash: string): Promise<ApiKeyRecord | undefined> {
    return this.#activeKeys.find(hash, () => findActiveApiKey(this.db, hash, this.now()));
  }

  listApiKeys(accountId?: string): Promise<ApiKeyRecord[]> {
    return listApiKeys(this.db, accountId);
  }

  async revokeApiKey(idOrPrefix: string, accountId?: string): Promise<boolean> {
    const revoked = await revokeApiKey(this.db, idOrPrefix, accountId, this.now());
    this.#activeKeys.clear();
    return revoked;
  }

  async rotateApiKey(
    id: string,
    accountId: string,
    replacement: Pick<NewApiKey, 'prefix' | 'hash'>,
    graceMs: number,
  ): Promise<ApiKeyRotation | undefined> {
    const rotation = await rotateApiKey(this.db, id, accountId, replacement, graceMs, this.now());
    this.#activeKeys.clear();
    return rotation;
  }

  touchApiKey(id: string, at: number): Promise<void> {
    return touchApiKey(this.db, id, at);
  }

  async setApiKeyLimits(
    idOrPrefix: string,
    limits: UsageLimits,
    accountId?: string,
  ): Promise<ApiKeyRecord | undefined> {
    const key = await setApiKeyLimits(this.db, idOrPrefix, limits, accountId, this.now());
    this.#activeKeys.clear();
    return key;
  }

  getAccountLimits(accountId: string): Promise<UsageLimits | undefined> {
    return getAccountLimits(this.db, accountId);
  }

  setAccountLimits(accountId: string, limits: UsageLimits): Promise<boolean> {
    return setAccountLimits(this.db, accountId, limits);
  }

  listUsage(accountId: string, query: UsageQuery): Promise<UsageSum[]> {
    return listUsage(this.db, accountId, query);
  }

  async createTask(task: NewTask): Promise<TaskRecord> {
    const created = await this.#creations.create({ task, now: this.now() });
    // Without a key nothing is replayed or in conflict.
    if (created.outcome !== 'created') throw new Error(`a creation without a key was ${created.outcome}`);
    return created.task;
  }

  getTask(id: string, scope?: TaskScope): Promise<TaskRecord | undefined> {
    return this.#reads.getTask(id, scope);
  }

  getTasks(ids: readonly string[]): Promise<Map<string, TaskRecord>> {
    return this.#reads.getTasks(ids);
  }

  createTaskOnce(
    task: NewTask,
    idempotency: { readonly key: string; readonly requestHash: string; readonly since: number },
  ): Promise<IdempotentCreation> {
    return this.#creations.create({ task, idempotency, now: this.now() });
  }

  createFile(file: Omit<FileRecord, 'createdAt'>): Promise<FileRecord> {
    return createFile(this.db, file, this.now());
  }

  deleteExpiredFiles(createdBefore: number, limit: number): Promise<FileRecord[]> {
    return deleteExpiredFiles(this.db, createdBefore, limit);
  }

  getFile(id: string, scope: TaskScope): Promise<FileRecord | undefined> {
    return getFile(this.db, id, scope);
  }

  listTasks(scope: TaskScope, query: TaskListQuery): Promise<TaskList> {
    return listTasks(this.db, scope, query);
  }

  cancelTask(id: string, scope: TaskScope): Promise<CancelOutcome | undefined> {
    return cancelTask(this.db, id, scope, this.now());
  }

  deleteExpiredTasks(completedBefore: number, limit: number): Promise<TaskRecord[]> {
    return deleteExpiredTasks(this.db, completedBefore, limit);
  }

  deleteTask(id: string, scope: TaskScope): Promise<DeleteOutcome | undefined> {
    return deleteTask(this.db, id, scope);
  }

  claimTask(options: ClaimOptions & { maxAttempts: number }): Promise<TaskRecord | undefined> {
    const claimOptions = { ...options, skipLocked: this.#skipLocked };
    return options.routing
      ? claimRoutedTask(this.#claimDb, claimOptions, options.routing, this.now(), this.#circuits)
      : claimTask(this.#claimDb, claimOptions, this.now());
  }

  rerouteTask(
    claim: Claim,
    route: EngineRoute,
    exclude: ReadonlySet<string>,
    routing: Omit<ClaimRouting, 'routes'> & { readonly leaseMs: number },
  ): Promise<EngineChoice> {
    return rerouteTask(
      this.db,
      claim,
      route,
      exclude,
      { ...routing, skipLocked: this.#skipLocked },
      this.now(),
    ).finally(() => this.#circuits.clear());
  }

  recordEngineOutcome(
    engine: string,
    outcome: 'succeeded' | 'unavailable',
    policy: CircuitPolicy,
  ): Promise<void> {
    return recordEngineOutcome(this.db, engine, outcome, policy, this.now()).then(
      (changed) => {
        if (changed) this.#circuits.clear();
      },
      (error: unknown) => {
        this.#circuits.clear();
        throw error;
      },
    );
  }

  engineStats(): Promise<EngineStats> {
    return engineStats(this.db, this.now());
  }

  registerWorker(id: string, models: readonly ModelId[], ttlMs: number): Promise<void> {
    return registerWorker(this.db, id, models, ttlMs, this.now());
  }

  removeWorker(id: string): Promise<void> {
    return removeWorker(this.db, id);
  }

  servedModels(): Promise<Set<ModelId>> {
    return servedModels(this.db, this.now());
  }

  abstract holdWorkerLock(workerId: string): Promise<WorkerLock>;

  listLeaseOwners(): Promise<string[]> {
    return listLeaseOwners(this.db);
  }

  listLocklessWorkers(): Promise<string[]> {
    // Only PostgreSQL has sessions to read: claims there lock rows, and pools hold worker locks.
    return this.#skipLocked ? listLocklessWorkers(this.db) : Promise.resolve([]);
  }

  requeueOrphanedTasks(goneWorkers: readonly string[]): Promise<number> {
    return requeueOrphanedTasks(this.db, goneWorkers, this.now());
  }

  failAbandonedTasks(maxAttempts: number): Promise<number> {
    return failAbandonedTasks(this.db, maxAttempts, this.now());
  }

  reportProgress(claim: Claim, progress: number): Promise<boolean> {
    return reportProgress(this.db, claim, progress, this.now());
  }

  recordAspectRatio(claim: Claim, ratio: FixedAspectRatio): Promise<boolean> {
    return recordAspectRatio(this.db, claim, ratio, this.now());
  }

  renewLeases(workerId: string, claims: readonly Claim[], leaseMs: number): Promise<Set<string>> {
    return renewLeases(this.db, workerId, claims, leaseMs, this.now());
  }

  recordUpstreamJob(claim: Claim, job: UpstreamJob): Promise<boolean> {
    return recordUpstreamJob(this.db, claim, job, this.now());
  }

  takeEndedUpstreamJobs(engines: readonly string[], limit: number): Promise<EndedUpstreamJob[]> {
    return takeEndedUpstreamJobs(this.db, engines, limit, this.#skipLocked);
  }

  findUpstreamJobTask(engine: string, upstreamId: string): Promise<string | undefined> {
    return findUpstreamJobTask(this.db, engine, upstreamId);
  }

  completeTask(claim: Claim, resultKey: string): Promise<boolean> {
    return completeTask(this.db, claim, resultKey, this.now());
  }

  failTask(claim: Claim, error: TaskError): Promise<boolean> {
    return failTask(this.db, claim, error, this.now());
  }

  releaseTask(claim: Claim): Promise<boolean> {
    return releaseTask(this.db, claim, this.now());
  }

  countPendingTasks(): Promise<number> {
    return countPendingTasks(this.db);
  }

  queueStats(): Promise<QueueStats> {
    return queueStats(this.db, this.now());
  }

  recentRunTimes(model: ModelId, query: RecentRunsQuery): Promise<number[]> {
    return recentRunTimes(this.db, model, query);
  }

  getWebhookSecrets(accountId: string): Promise<WebhookSecret[]> {
    return getWebhookSecrets(this.db, accountId, this.now());
  }

  rotateWebhookSecret(accountId: string, overlapMs: number): Promise<WebhookSecret> {
    return rotateWebhookSecret(this.db, accountId, overlapMs, this.now());
  }

  createDelivery(delivery: NewDelivery): Promise<DeliveryRecord> {
    return createDelivery(this.db, delivery, this.now());
  }

  claimDeliveries(options: DeliveryClaimOptions): Promise<DeliveryRecord[]> {
    return claimDeliveries(this.db, { ...options, skipLocked: this.#skipLocked }, this.now());
  }

  finishDeliveryAttempt(
    claim: DeliveryClaim,
    attempt: Omit<DeliveryAttempt, 'number'>,
    outcome: DeliveryOutcome,
  ): Promise<boolean> {
    return finishDeliveryAttempts(this.db, [{ claim, attempt, outcome }], this.now()).then(
      ([recorded]) => recorded === true,
    );
  }

  finishDeliveryAttempts(finished: readonly FinishedDeliveryAttempt[]): Promise<boolean[]> {
    return finishDeliveryAttempts(this.db, finished, this.now());
  }

  releaseDelivery(claim: DeliveryClaim): Promise<boolean> {
    return releaseDelivery(this.db, claim, this.now());
  }

  listDeliveries(taskId: string): Promise<DeliveryWithAttempts[]> {
    return listDeliveries(this.db, taskId);
  }
}

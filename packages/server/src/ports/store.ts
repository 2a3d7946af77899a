/**
 * The `Store` port: accounts, API keys, tasks and callback deliveries. The task table is the queue and the
 * delivery table the outbox. Implementations: SQLite (`store/sqlite/sqlite-store.ts`) and PostgreSQL
 * (`store/pg/pg-store.ts`), held to one conformance suite.
 */
import type {
  DeliveryAttempt,
  DeliveryRecord,
  DeliveryWithAttempts,
  NewDelivery,
} from '../domain/delivery.js';
import type { CircuitPolicy, CircuitRecord, EngineChoice, EngineRoute } from '../domain/engine-route.js';
import type { FixedAspectRatio } from '../domain/frame-size.js';
import type { GenerationParams } from '../domain/generation-request.js';
import type { ModelId } from '../domain/models.js';
import type { Environment, TaskError, TaskRecord, TaskScope } from '../domain/task.js';
import type { TaskListQuery } from '../domain/task-list-query.js';
import type { FileRecord } from '../domain/uploaded-file.js';
import type { UpstreamJob } from '../domain/upstream-job.js';
import type { UsageGrouping, UsageLimits } from '../domain/usage.js';
import type { UsageSum } from '../domain/usage-report.js';
import type { WorkSignal } from './work-signal.js';

export interface Account {
  readonly id: string;
  readonly createdAt: number;
  /** The owner's sign-in email (lower case); null for an account made for keys only. */
  readonly email: string | null;
}

/** Who signs in to an account's dashboard. */
export interface AccountOwner {
  /** Lower case. */
  readonly email: string;
  /** argon2id, PHC string. */
  readonly passwordHash: string;
}

export interface OwnerCredentials extends AccountOwner {
  readonly accountId: string;
}

/** A dashboard sign-in: the cookie holds a token, the store its hash. */
export interface DashboardSession {
  readonly tokenHash: string;
  readonly accountId: string;
  /** Sent back in `X-CSRF-Token` with every state-changing request. */
  readonly csrfToken: string;
  /** The environment the dashboard is looking at. */
  readonly environment: Environment;
  readonly createdAt: number;
  readonly expiresAt: number;
}

export interface ApiKeyRecord {
  readonly id: string;
  readonly accountId: string;
  readonly name: string;
  readonly environment: Environment;
  /** The first characters of the key, safe to show. */
  readonly prefix: string;
  readonly createdAt: number;
  readonly lastUsedAt: number | null;
  readonly revokedAt: number | null;
  /** A rotated key works until then; null for a key without an end. */
  readonly expiresAt: number | null;
  readonly limits: UsageLimits;
}

export interface ApiKeyRotation {
  readonly created: ApiKeyRecord;
  /** The key replaced: `expiresAt` is the end of its grace period. */
  readonly previous: ApiKeyRecord;
}

export interface NewApiKey {
  readonly accountId: string;
  readonly name: string;
  readonly environment: Environment;
  readonly prefix: string;
  readonly hash: string;
  /** No limits when absent. */
  readonly limits?: UsageLimits;
}

export interface NewTask extends TaskScope {
  readonly id: string;
  readonly model: ModelId;
  readonly params: GenerationParams;
  /** The API key creating it; null or absent from the dashboard. Its limits apply besides the account's. */
  readonly apiKeyId?: string | null;
  /** What it will cost at the configured prices, in micro-units; null or absent when not priced. */
  readonly costMicros?: number | null;
}

/** Which usage `listUsage` sums: settled and reserved records created in [start, end) (epoch ms). */
export interface UsageQuery {
  readonly start: number;
  readonly end: number;
  readonly groupBy: UsageGrouping;
  /** Only this environment's; every environment when absent. */
  readonly environment?: Environment;
}

export interface ClaimOptions {
  readonly workerId: string;
  readonly leaseMs: number;
  /** Claim only these models; all models when absent. */
  readonly models?: readonly ModelId[];
  /**
   * Leave pending the tasks of an account with this many tasks `processing` (any model, any environment),
   * until one of them ends; 0 or absent: no cap. Expired leases are still claimed again: that replaces a run.
   */
  readonly maxActivePerAccount?: number;
  /**
   * Route the claimed task: claim only tasks of the routes' models for which some engine can take one now (room
   * under its `max_concurrency` across the cluster, circuit not open), and record that engine in the task.
   */
  readonly routing?: ClaimRouting;
}

/** How claims and reroutes pick an engine (domain/engine-route.ts `chooseEngine`). */
export interface ClaimRouting {
  readonly routes: ReadonlyMap<ModelId, EngineRoute>;
  /** Engine name → the most tasks in flight on it; engines absent here have no cap. */
  readonly maxConcurrency: ReadonlyMap<string, number>;
  readonly circuit: CircuitPolicy;
  /** The weighted pick's random number in [0, 1); `Math.random` when absent. */
  readonly random?: () => number;
}

/** A worker pool's hold on its liveness lock (`Store.holdWorkerLock`). */
export interface WorkerLock {
  release(): Promise<void>;
}

/** What the store knows of the engines, for metrics and the model list. */
export interface EngineStats {
  /** Tasks processing under a live lease, by engine. */
  readonly inFlight: ReadonlyMap<string, number>;
  readonly circuits: ReadonlyMap<string, CircuitRecord>;
  /** The store's clock, epoch ms, against which the circuits' times are read. */
  readonly now: number;
}

/** A claim on a task: fenced writes name the attempt they belong to. */
export interface Claim {
  readonly taskId: string;
  readonly attempt: number;
  readonly workerId: string;
}

export interface WebhookSecret {
  /** `whsec_…` */
  readonly secret: string;
  readonly createdAt: number;
  /** When a rotation retired it, the end of its overlap; null for the current secret. */
  readonly expiresAt: number | null;
}

export interface DeliveryClaimOptions {
  readonly workerId: string;
  /** How long the claim holds: longer than one attempt can take. */
  readonly leaseMs: number;
  readonly limit: number;
  /** Receivers already at their concurrency limit in this process. */
  readonly excludeHosts: readonly string[];
  /** Only deliveries to this receiver: more for a receiver whose attempt just ended. */
  readonly host?: string;
  /**
   * At most this many deliveries to one receiver (`host`) in flight; with `hostsInFlight`, a claim takes no more
   * for a host than the room it has left, so that nothing claimed must be handed back unsent.
   */
  readonly perHostLimit?: number;
  /** Deliveries in flight in this process, by host. */
  readonly hostsInFlight?: Readonly<Record<string, number>>;
}

/** A claim on one delivery attempt: fenced writes name the attempt they belong to. */
export interface DeliveryClaim {
  readonly deliveryId: string;
  readonly attempt: number;
  readonly workerId: string;
}

export type DeliveryOutcome =
  | { readonly status: 'succeeded' | 'failed' }
  | { readonly status: 'pending'; readonly nextAttemptAt: number };

/** One attempt to record: whose claim it was, what happened, and where the delivery goes next. */
export interface FinishedDeliveryAttempt {
  readonly claim: DeliveryClaim;
  readonly attempt: Omit<DeliveryAttempt, 'number'>;
  readonly outcome: DeliveryOutcome;
}

/** The queue as metrics show it: read at scrape time, the same from every process. */
export interface QueueStats {
  /** The store's clock, epoch milliseconds, for ages. */
  readonly now: number;
  /** Counts of pending and processing tasks by model (finished tasks are counted by the processes' counters). */
  readonly unfinished: readonly {
    readonly status: 'pending' | 'processing';
    readonly model: ModelId;
    readonly count: number;
  }[];
  readonly oldestPendingAt: number | null;
  readonly expiredLeases: number;
  readonly pendingDeliveries: number;
}

export type { TaskListQuery, UsageSum };

export interface TaskList {
  readonly tasks: TaskRecord[];
  readonly hasMore: boolean;
}

/** What `createTaskOnce` did: made the task, found the one the key made before, or found a different request. */
export type IdempotentCreation =
  | { readonly outcome: 'created' | 'replayed'; readonly task: TaskRecord }
  | { readonly outcome: 'conflict' };

export interface CancelOutcome {
  readonly cancelled: boolean;
  readonly task: TaskRecord;
}

export interface DeleteOutcome {
  readonly deleted: boolean;
  readonly task: TaskRecord;
}

/** Opening and closing the database. */
export interface StoreLifecycle {
  /** Applies pending numbered migrations. */
  migrate(): Promise<void>;
  /**
   * A work signal across the processes sharing this store (PostgreSQL: LISTEN/NOTIFY). Absent where all
   * claimers share one process (SQLite): an in-process signal serves.
   */
  createWorkSignal?(options: { readonly onError?: (error: unknown) => void }): WorkSignal;
  close(): Promise<void>;
  /** A cheap round trip, for readiness checks. */
  ping(): Promise<void>;
}

/** Accounts, their dashboard owners and failed sign-ins. */
export interface AccountStore {
  createAccount(): Promise<Account>;
  /** An account with a dashboard owner; undefined when the email already has an account. */
  createOwnedAccount(owner: AccountOwner): Promise<Account | undefined>;
  /** Gives an account without an owner its owner; false when it has one, does not exist, or the email is taken. */
  setAccountOwner(accountId: string, owner: AccountOwner): Promise<boolean>;
  getAccount(id: string): Promise<Account | undefined>;
  findAccountOwner(email: string): Promise<OwnerCredentials | undefined>;
  /**
   * Replaces the owner's password hash, ends every session of the account and forgets the email's failed
   * sign-ins, together; false when no account has that owner.
   */
  setOwnerPassword(email: string, passwordHash: string): Promise<boolean>;
  countAccounts(): Promise<number>;
  recordSignInFailure(email: string): Promise<void>;
  /** When `email`'s sign-ins failed since `since` (epoch ms), oldest first. */
  listSignInFailures(email: string, since: number): Promise<number[]>;
  /** Forgets every email's failed sign-ins before `before` (epoch ms): they count against no email any more. */
  forgetSignInFailures(before: number): Promise<void>;
}

/** The dashboard's sign-ins. */
export interface SessionStore {
  createSession(session: Omit<DashboardSession, 'createdAt'>): Promise<DashboardSession>;
  /** A session that has not expired. */
  findSession(tokenHash: string): Promise<DashboardSession | undefined>;
  setSessionEnvironment(tokenHash: string, environment: Environment): Promise<boolean>;
  deleteSession(tokenHash: string): Promise<void>;
}

/** Server-wide secrets (the result links' signing key). */
export interface SecretStore {
  /** A named server-wide secret, created by `generate` on first use and the same for every process after. */
  getOrCreateSecret(name: string, generate: () => string): Promise<string>;
}

/** API keys, stored as hashes. */
export interface ApiKeyStore {
  createApiKey(key: NewApiKey): Promise<ApiKeyRecord>;
  /**
   * An active key (neither revoked nor past its rotation's grace period) by hash. May answer from a lookup up to
   * 1 s old: a key revoked, rotated or limited by another process keeps working here for at most 1 s more (its
   * record's other fields may be as old); through this store it stops at once.
   */
  findActiveApiKey(hash: string): Promise<ApiKeyRecord | undefined>;
  listApiKeys(accountId?: string): Promise<ApiKeyRecord[]>;
  /**
   * Revokes by key id or by displayed prefix, of `accountId`'s keys when given; false unless exactly one
   * active key matched.
   */
  revokeApiKey(idOrPrefix: string, accountId?: string): Promise<boolean>;
  /**
   * Replaces an active key of the account with a new one of the same name and environment; the old one works
   * for `graceMs` more (revoked at once when 0). Undefined when there is no such active key.
   */
  rotateApiKey(
    id: string,
    accountId: string,
    replacement: Pick<NewApiKey, 'prefix' | 'hash'>,
    graceMs: number,
  ): Promise<ApiKeyRotation | undefined>;
  touchApiKey(id: string, at: number): Promise<void>;
  /**
   * Sets the monthly limits of the one active key with this id or prefix (of `accountId`'s keys when given);
   * undefined unless exactly one matched.
   */
  setApiKeyLimits(
    idOrPrefix: string,
    limits: UsageLimits,
    accountId?: string,
  ): Promise<ApiKeyRecord | undefined>;
}

/** Monthly limits and the usage they are checked against. */
export interface UsageStore {
  /** The account's monthly limits; undefined when there is no such account. */
  getAccountLimits(accountId: string): Promise<UsageLimits | undefined>;
  /** False when there is no such account. */
  setAccountLimits(accountId: string, limits: UsageLimits): Promise<boolean>;
  /**
   * Usage of the account, grouped. Usage records are made with their task (reserved), settled when it completes
   * and deleted when it fails or is cancelled; they outlive the task (retention leaves them).
   */
  listUsage(accountId: string, query: UsageQuery): Promise<UsageSum[]>;
}

/** Tasks as their owners see them: made, read, listed, cancelled, deleted; the queue's size. */
export interface TaskStore {
  /**
   * Makes the task and reserves its usage, in one transaction; throws `BudgetExceeded` (domain/usage.ts), keeping
   * nothing, when the reservation would pass a monthly limit of the account or the API key. Concurrent creations
   * of one account, from any number of processes, are checked one after another.
   */
  createTask(task: NewTask): Promise<TaskRecord>;
  /** A task visible to `scope`, or any task when `scope` is absent (workers). */
  getTask(id: string, scope?: TaskScope): Promise<TaskRecord | undefined>;
  /**
   * The tasks of `ids` that exist, by id, whatever their scope (the caller has checked it), in one read: the
   * tasks every event stream of a process is watching (tasks/task-watcher.ts).
   */
  getTasks(ids: readonly string[]): Promise<Map<string, TaskRecord>>;
  /**
   * `createTask` under an idempotency key of the task's scope: the first creation with the key (or the first
   * since `since`, epoch ms) makes the task; later ones with the same request hash get that task back, with
   * another hash `conflict`. Concurrent creations with one key make one task.
   */
  createTaskOnce(
    task: NewTask,
    idempotency: { readonly key: string; readonly requestHash: string; readonly since: number },
  ): Promise<IdempotentCreation>;
  /** A page of the scope's tasks, newest first. */
  listTasks(scope: TaskScope, query: TaskListQuery): Promise<TaskList>;
  /**
   * Fails a pending or processing task with `cancelled` and queues its callback; a final task is returned
   * unchanged with `cancelled: false`. Undefined when the scope has no such task.
   */
  cancelTask(id: string, scope: TaskScope): Promise<CancelOutcome | undefined>;
  /**
   * Deletes up to `limit` final tasks that ended before `completedBefore` (epoch ms), with their callback
   * logs, and returns them so that their files can be deleted too (retention).
   */
  deleteExpiredTasks(completedBefore: number, limit: number): Promise<TaskRecord[]>;
  /** Deletes a final task and its callback log; a running one is returned with `deleted: false`. */
  deleteTask(id: string, scope: TaskScope): Promise<DeleteOutcome | undefined>;
  /** Tasks pending now, for metrics and readiness. */
  countPendingTasks(): Promise<number>;
  /** Queue depth, age and lease health for `/metrics`. */
  queueStats(): Promise<QueueStats>;
  /**
   * How long the model's most recent completed runs took, from their claim to their completion (ms), newest
   * first: at most `limit`, completed since `since` (tasks/run-time-estimates.ts).
   */
  recentRunTimes(model: ModelId, query: RecentRunsQuery): Promise<number[]>;
}

export interface RecentRunsQuery {
  /** Epoch ms: runs completed before then do not count. */
  readonly since: number;
  readonly limit: number;
}

/** Uploaded files. */
export interface FileStore {
  createFile(file: Omit<FileRecord, 'createdAt'>): Promise<FileRecord>;
  /** Deletes up to `limit` uploaded files created before `createdBefore` (epoch ms) and returns them (retention). */
  deleteExpiredFiles(createdBefore: number, limit: number): Promise<FileRecord[]>;
  /** An uploaded file of `scope`. */
  getFile(id: string, scope: TaskScope): Promise<FileRecord | undefined>;
}

/** The job of a task that failed while it ran upstream. */
export interface EndedUpstreamJob {
  readonly taskId: string;
  readonly job: UpstreamJob;
}

/** A worker's hold on a task, from its claim to its end; writes fenced by the claim. */
export interface ClaimStore {
  /**
   * Claims the oldest pending task, or a processing one whose lease expired and that has attempts left,
   * and moves it to processing with a fresh lease and `attempts + 1`.
   */
  claimTask(options: ClaimOptions & { maxAttempts: number }): Promise<TaskRecord | undefined>;
  /** Fails, with `worker_lost`, processing tasks whose lease expired after their last allowed attempt. */
  failAbandonedTasks(maxAttempts: number): Promise<number>;
  /**
   * Extends the leases of claims of one worker pool, all at once (a pool following thousands of remote jobs);
   * resolves with the tasks whose claim is still current (the others' runs must stop).
   */
  renewLeases(workerId: string, claims: readonly Claim[], leaseMs: number): Promise<Set<string>>;
  /** Raises progress (never lowers it); false when the claim is no longer current. */
  reportProgress(claim: Claim, progress: number): Promise<boolean>;
  /**
   * Stores the ratio an `adaptive` task resolved to in its params, so the task echoes it; false when the claim is
   * no longer current.
   */
  recordAspectRatio(claim: Claim, ratio: FixedAspectRatio): Promise<boolean>;
  /**
   * Stores the job the task's remote engine submitted, when its upstream accepted it; a later claim of the task
   * carries it (and keeps the task on its engine). False when the claim is no longer current.
   */
  recordUpstreamJob(claim: Claim, job: UpstreamJob): Promise<boolean>;
  /**
   * Takes up to `limit` jobs of failed tasks that ran on one of `engines`, to cancel upstream: each job is
   * handed out once (the task forgets it).
   */
  takeEndedUpstreamJobs(engines: readonly string[], limit: number): Promise<EndedUpstreamJob[]>;
  completeTask(claim: Claim, resultKey: string): Promise<boolean>;
  failTask(claim: Claim, error: TaskError): Promise<boolean>;
  /** Hands a claimed task back to the queue without counting the attempt (graceful shutdown). */
  releaseTask(claim: Claim): Promise<boolean>;
}

/** Finding the task of an upstream job a provider's callback names (tasks/provider-callbacks.ts). */
export interface UpstreamJobStore {
  /** The id of the processing task whose stored upstream job is `upstreamId` on engine `engine`, if any. */
  findUpstreamJobTask(engine: string, upstreamId: string): Promise<string | undefined>;
}

/** Engines: fallback along a route, circuit breakers, in-flight counts. */
export interface RoutingStore {
  /**
   * Moves a claimed task to another engine of `route` (fallback), skipping `exclude` (the engines it failed
   * on), under the same caps and circuits as claims; writes the engine only for `kind: 'engine'`. `wait`: the
   * next usable engines are all at their cap; `none`: nothing usable is left (or the claim is not current).
   */
  rerouteTask(
    claim: Claim,
    route: EngineRoute,
    exclude: ReadonlySet<string>,
    routing: Omit<ClaimRouting, 'routes'> & { readonly leaseMs: number },
  ): Promise<EngineChoice>;
  /**
   * Feeds an engine's circuit breaker: `unavailable` counts a failure in a row (opening the circuit at the
   * policy's count, for its cool-down), `succeeded` closes it.
   */
  recordEngineOutcome(
    engine: string,
    outcome: 'succeeded' | 'unavailable',
    policy: CircuitPolicy,
  ): Promise<void>;
  engineStats(): Promise<EngineStats>;
}

/** Running worker pools: what they serve, their liveness, the tasks they left behind. */
export interface WorkerStore {
  /** Records a running worker pool and the model IDs it serves, until `ttlMs` from now unless renewed. */
  registerWorker(id: string, models: readonly ModelId[], ttlMs: number): Promise<void>;
  removeWorker(id: string): Promise<void>;
  /** The model IDs some worker registered and not expired serves. */
  servedModels(): Promise<Set<ModelId>>;
  /**
   * Held by a worker pool for as long as it runs, before it registers or claims: on PostgreSQL a session-level
   * lock on a connection of its own, gone the moment its process dies, which `listLocklessWorkers` reads;
   * on SQLite (one machine) nothing.
   */
  holdWorkerLock(workerId: string): Promise<WorkerLock>;
  /** The worker pools that hold processing tasks (each a `WorkerPool.workerId`). */
  listLeaseOwners(): Promise<string[]>;
  /**
   * The registered pools whose worker lock no session holds now (PostgreSQL; none on SQLite): dead, or alive with
   * its lock's connection lost for a moment (it takes the lock again as it reconnects).
   */
  listLocklessWorkers(): Promise<string[]>;
  /**
   * Requeues, without counting the attempt, the processing tasks of `goneWorkers`, and forgets those pools;
   * resolves with the tasks requeued.
   */
  requeueOrphanedTasks(goneWorkers: readonly string[]): Promise<number>;
}

/**
 * Callbacks. Every status change that reaches processing (the first time), completed or failed queues a
 * delivery for a task with a `callback_url`, in the same transaction as the change (the outbox).
 */
export interface DeliveryStore {
  /** The account's secrets that sign now: the current one first, then any still in a rotation overlap. */
  getWebhookSecrets(accountId: string): Promise<WebhookSecret[]>;
  /** Replaces the current secret; the old one keeps signing for `overlapMs`. */
  rotateWebhookSecret(accountId: string, overlapMs: number): Promise<WebhookSecret>;
  /** Queues a delivery outside a status change (redelivery). */
  createDelivery(delivery: NewDelivery): Promise<DeliveryRecord>;
  /** Claims due deliveries for one attempt each, oldest due first. */
  claimDeliveries(options: DeliveryClaimOptions): Promise<DeliveryRecord[]>;
  /** Logs the attempt and applies its outcome; false when the claim is no longer current. */
  finishDeliveryAttempt(
    claim: DeliveryClaim,
    attempt: Omit<DeliveryAttempt, 'number'>,
    outcome: DeliveryOutcome,
  ): Promise<boolean>;
  /**
   * Records a group of attempts as `finishDeliveryAttempt` does each, in one transaction; says, in order, which
   * were recorded.
   */
  finishDeliveryAttempts(finished: readonly FinishedDeliveryAttempt[]): Promise<boolean[]>;
  /** Hands back a claimed delivery that was not attempted. */
  releaseDelivery(claim: DeliveryClaim): Promise<boolean>;
  /** A task's deliveries with their attempts, oldest first. */
  listDeliveries(taskId: string): Promise<DeliveryWithAttempts[]>;
}

/**
 * The whole port, implemented by each store. Consumers take the role interfaces above that they use, so that
 * what a module can do to the database shows in its signature.
 */
export interface Store
  extends StoreLifecycle,
    AccountStore,
    SessionStore,
    SecretStore,
    ApiKeyStore,
    UsageStore,
    TaskStore,
    FileStore,
    ClaimStore,
    UpstreamJobStore,
    RoutingStore,
    WorkerStore,
    DeliveryStore {
  /**
   * A capability of stores shared by several processes (PostgreSQL): a work signal between them, through the
   * store's own connection and channels. Absent, the store's claimers share one process (SQLite) and an
   * in-process signal serves.
   */
  createWorkSignal?(options: { readonly onError?: (error: unknown) => void }): WorkSignal;
}

import { type Expression, type ExpressionBuilder, type Kysely, type SqlBool, sql } from 'kysely';
import type { ModelId } from '../../domain/models.js';
import type { TaskRecord, TaskStatus } from '../../domain/task.js';
import type { ClaimOptions } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { entriesParameter, isOneOfList, listParameter, textAtEntries } from '../list-parameters.js';
import { type Placeholder, preparedQuery } from '../prepared-query.js';
import { toTaskRecord } from '../task-row.js';
import { TASK_COLUMN_NAMES } from './create-task.js';
import { enqueueFirstProcessingDelivery } from './enqueue-deliveries.js';

export interface ClaimTaskOptions extends ClaimOptions {
  readonly maxAttempts: number;
  /**
   * PostgreSQL: lock the candidate rows `FOR UPDATE SKIP LOCKED` so concurrent claimers pass over them.
   * SQLite has one writer and runs the single statement atomically, so it needs (and accepts) no lock.
   */
  readonly skipLocked?: boolean;
}

/**
 * PostgreSQL: the class half of the transaction-scoped advisory lock capped claims take (the other half is a
 * hash of the schema, so installations sharing a database do not wait for each other).
 */
const CAPPED_CLAIM_LOCK_CLASS = 0x76670001;

/** PostgreSQL: makes capped claims (and reroutes) in this transaction run one at a time across processes. */
export async function takeCappedClaimLock(trx: Kysely<Database>): Promise<void> {
  await sql`select pg_advisory_xact_lock(${sql.lit(CAPPED_CLAIM_LOCK_CLASS)}, hashtext(current_schema()))`.execute(
    trx,
  );
}

type TaskFilter = (eb: ExpressionBuilder<Database, 'tasks'>) => Expression<SqlBool>;

/**
 * One statement picks the oldest claimable task and takes it, so no two claimers get the same one.
 *
 * Claimable is "pending" or "processing with an expired lease and attempts left". The two are looked up
 * separately, each oldest-first straight off the `(status, created_at, id)` index, and the older of the
 * (at most) two wins: a single `WHERE pending OR expired ORDER BY created_at` makes SQLite sort every
 * pending row on each claim, which grows with the backlog.
 *
 * With `maxActivePerAccount`, pending tasks of accounts already running that many are passed over (they stay
 * pending, in order, for later claims). The capped accounts are one uncorrelated subquery over the processing
 * rows, which are few (one per running worker slot, plus expired leases), evaluated once per claim. SQLite
 * runs the whole claim as one atomic statement, so the count it sees is exact; on PostgreSQL two concurrent
 * claims could each see room for the same account, so capped claims there take a transaction-scoped advisory
 * lock first and run one at a time, each seeing the claims committed before it.
 */
export async function claimTask(
  db: Kysely<Database>,
  options: ClaimTaskOptions,
  now: number,
): Promise<TaskRecord | undefined> {
  if (options.models?.length === 0) return undefined;
  const cap = options.maxActivePerAccount ?? 0;
  const { claim, claimWithCallback } = claimStatements(options, now);
  if (cap > 0 && options.skipLocked) {
    return db.transaction().execute(async (trx) => {
      await takeCappedClaimLock(trx);
      return claimWithCallback(trx);
    });
  }
  // The oldest claimable task, if it has no callback_url, in one statement: nothing else is written with it.
  const plain = await claim(db, true);
  if (plain) return toTaskRecord(plain);
  // Otherwise (it has one, or nothing is claimable) its first `task.processing` callback is queued in the
  // same transaction as the claim. On PostgreSQL that costs BEGIN and COMMIT, a round trip each.
  return db.transaction().execute(claimWithCallback);
}

/**
 * The oldest claimable task without a callback_url, taken in one statement that also records the engine chosen
 * for its model (`engines`: model → engine, for the models to claim among); undefined when the oldest has a
 * callback or nothing is claimable. claim-routed-task.ts's path for claims without caps or circuit trials.
 */
export async function claimRoutedWithoutCallback(
  db: Kysely<Database>,
  options: ClaimTaskOptions,
  engines: ReadonlyMap<ModelId, string>,
  now: number,
): Promise<TaskRecord | undefined> {
  const row = await claimStatements({ ...options, models: [...engines.keys()] }, now, engines).claim(
    db,
    true,
  );
  return row ? toTaskRecord(row) : undefined;
}

/**
 * The claim of the oldest claimable task, for a transaction the caller holds (claim-routed-task.ts): it also
 * queues the task's first `task.processing` callback, and records the engine `engines` gives its model.
 */
export function claimInTransaction(
  trx: Kysely<Database>,
  options: ClaimTaskOptions,
  engines: ReadonlyMap<ModelId, string>,
  now: number,
): Promise<TaskRecord | undefined> {
  return claimStatements({ ...options, models: [...engines.keys()] }, now, engines).claimWithCallback(trx);
}

type ClaimValueName =
  | 'pending'
  | 'processing'
  | 'one'
  | 'workerId'
  | 'leaseUntil'
  | 'now'
  | 'maxAttempts'
  | 'models'
  | 'engines'
  | 'cap';

/** What varies between claims' statements; every other value is a parameter. */
interface ClaimShape {
  /** Among some models only (`models`, one list parameter). */
  readonly models: boolean;
  /** Records the engine of the claimed task's model (`engines`, one parameter). */
  readonly engines: boolean;
  /** Passes over the pending tasks of accounts at `maxActivePerAccount`. */
  readonly capped: boolean;
  readonly skipLocked: boolean;
  /** Claims only a task without a callback_url. */
  readonly withoutCallback: boolean;
}

/**
 * The claim's statement, built with a placeholder for every value and compiled once per shape (prepared-query.ts):
 * built with Kysely on each claim, its unions and subqueries cost more than SQLite's running it, on every
 * task's way from creation to a worker.
 */
function buildClaim(db: Kysely<Database>, value: Placeholder<ClaimValueName>, shape: ClaimShape) {
  const pending: TaskFilter = (eb) => eb('status', '=', value<TaskStatus>('pending'));
  const expired: TaskFilter = (eb) =>
    eb.and([
      eb('status', '=', value<TaskStatus>('processing')),
      eb('lease_expires_at', '<=', value<number>('now')),
      eb('attempts', '<', value<number>('maxAttempts')),
    ]);

  const pendingWithRoom: TaskFilter = shape.capped
    ? (eb) =>
        eb.and([
          pending(eb),
          eb(
            'account_id',
            'not in',
            eb
              .selectFrom('tasks as active')
              .select('active.account_id')
              .where('active.status', '=', value<TaskStatus>('processing'))
              .groupBy('active.account_id')
              .having((having) => having.fn.countAll(), '>=', value<number>('cap')),
          ),
        ])
    : pending;

  const oldest = (filter: TaskFilter) => {
    let query = db
      .selectFrom('tasks')
      .select(['id', 'created_at'])
      .where(filter)
      .orderBy('created_at')
      .orderBy('id')
      .limit(value<number>('one'));
    if (shape.models) query = query.where((eb) => isOneOfList(db, eb.ref('model'), value('models')));
    if (shape.skipLocked) query = query.forUpdate().skipLocked();
    return query;
  };

  const candidates = db
    .selectFrom(oldest(pendingWithRoom).as('p'))
    .select(['p.id', 'p.created_at'])
    .unionAll(db.selectFrom(oldest(expired).as('e')).select(['e.id', 'e.created_at']));
  const candidate = db
    .selectFrom(candidates.as('c'))
    .select('c.id')
    .orderBy('c.created_at')
    .orderBy('c.id')
    .limit(value<number>('one'));

  let update = db
    .updateTable('tasks')
    .set((eb) => ({
      status: value<TaskStatus>('processing'),
      attempts: eb('attempts', '+', value<number>('one')),
      revision: eb('revision', '+', value<number>('one')),
      lease_owner: value<string>('workerId'),
      lease_expires_at: value<number>('leaseUntil'),
      updated_at: value<number>('now'),
      started_at: value<number>('now'),
      // The engine of the row's model, the map one parameter (list-parameters.ts); a task whose upstream job
      // was accepted stays on the engine that has it, which the next run resumes.
      ...(shape.engines && {
        engine: eb
          .case()
          .when('upstream_job', 'is', null)
          .then(textAtEntries(db, value('engines'), eb.ref('model')))
          .else(eb.ref('engine'))
          .end(),
      }),
    }))
    .where('id', '=', candidate)
    // Repeated on the row itself: under PostgreSQL's READ COMMITTED the candidate may have been taken
    // between the subquery's snapshot and the update; then this claims nothing rather than twice.
    .where((eb) => eb.or([pending(eb), expired(eb)]));
  if (shape.withoutCallback) update = update.where('callback_url', 'is', null);
  return update.returning(TASK_COLUMN_NAMES);
}

type PreparedClaim = ReturnType<typeof prepareClaim>;

// Named on PostgreSQL: planning the claim took three times as long as running it (pg-named-statements.ts).
const prepareClaim = (shape: ClaimShape) =>
  preparedQuery((db, value: Placeholder<ClaimValueName>) => buildClaim(db, value, shape), { named: true });

/** One prepared statement per shape: at most 32, each compiled at its first use. */
const preparedClaims = new Map<string, PreparedClaim>();

function preparedClaimOf(shape: ClaimShape): PreparedClaim {
  const key = `${shape.models}${shape.engines}${shape.capped}${shape.skipLocked}${shape.withoutCallback}`;
  let prepared = preparedClaims.get(key);
  if (!prepared) {
    prepared = prepareClaim(shape);
    preparedClaims.set(key, prepared);
  }
  return prepared;
}

function claimStatements(
  options: ClaimTaskOptions,
  now: number,
  /** Model → the engine to record on the claimed task, when the claim chooses it (routed claims). */
  engines?: ReadonlyMap<ModelId, string>,
) {
  const { models } = options;
  const cap = options.maxActivePerAccount ?? 0;
  const values = (executor: Kysely<Database>): Readonly<Record<ClaimValueName, unknown>> => ({
    pending: 'pending',
    processing: 'processing',
    one: 1,
    workerId: options.workerId,
    leaseUntil: now + options.leaseMs,
    now,
    maxAttempts: options.maxAttempts,
    models: models ? listParameter(executor, models) : null,
    engines: engines ? entriesParameter(Object.fromEntries(engines)) : null,
    cap,
  });

  const claim = async (executor: Kysely<Database>, withoutCallback: boolean) => {
    const prepared = preparedClaimOf({
      models: models !== undefined,
      engines: engines !== undefined,
      capped: cap > 0,
      skipLocked: options.skipLocked === true,
      withoutCallback,
    });
    const [row] = await prepared(executor, values(executor));
    return row;
  };

  const claimWithCallback = async (trx: Kysely<Database>) => {
    const row = await claim(trx, false);
    if (!row) return undefined;
    await enqueueFirstProcessingDelivery(trx, row, now);
    return toTaskRecord(row);
  };

  return { claim, claimWithCallback };
}

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CompiledQuery, Migrator } from 'kysely';
import pg from 'pg';
import { type DeliveryRecord, deliveryFor } from '../src/domain/delivery.js';
import { parseGenerationRequest } from '../src/domain/generation-request.js';
import { newTaskId } from '../src/domain/identifiers.js';
import type { TaskRecord } from '../src/domain/task.js';
import { BudgetExceeded, NO_LIMITS, type UsageLimits } from '../src/domain/usage.js';
import type { NewTask } from '../src/ports/store.js';
import { CIRCUITS_TTL_MS } from '../src/store/circuits-cache.js';
import { MIGRATIONS } from '../src/store/migrations/index.js';
import { MIGRATION_LOCK_KEY, openPgDatabase } from '../src/store/pg/pg-database.js';
import { PgStore, type PgStoreOptions } from '../src/store/pg/pg-store.js';
import { WORKER_LOCK_CLASS } from '../src/store/worker-lock-class.js';
import { addTextTasks, CIRCUIT_POLICY, engineOfNextClaim } from './helpers/circuit-routing.js';
import { CuttableTcpProxy } from './helpers/cuttable-tcp-proxy.js';
import { generationParams } from './helpers/generation-params.js';
import {
  freshSchemas,
  postgresSuite,
  type SchemaLender,
  schemaLender,
  TEST_DATABASE_URL,
} from './helpers/postgres.js';
import { compiledPage, plannedPages } from './helpers/task-list-plans.js';
import { until } from './helpers/until.js';
import { storeConformance } from './store-conformance.js';

const postgres = await postgresSuite();

const PARAMS = generationParams({ callback_url: 'https://hooks.example.com/videogen' });

interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Index Name'?: string;
  readonly 'Index Cond'?: string;
  readonly Plans?: readonly PlanNode[];
}

function planNodes(node: PlanNode | undefined): PlanNode[] {
  return node ? [node, ...(node.Plans ?? []).flatMap(planNodes)] : [];
}

const TABLES = [
  'accounts',
  'api_keys',
  'dashboard_sessions',
  'deleted_task_upstream_jobs',
  'engine_circuits',
  'files',
  'idempotency_keys',
  'kysely_migration',
  'kysely_migration_lock',
  'secrets',
  'sign_in_failures',
  'tasks',
  'usage_records',
  'webhook_attempts',
  'webhook_deliveries',
  'webhook_secrets',
  'workers',
];

/** A store with a query that holds its connection for 30 s. */
class SleepingStore extends PgStore {
  sleep(): Promise<unknown> {
    return this.db.executeQuery(CompiledQuery.raw('select pg_sleep(30)'));
  }
}

/** A store on a lent schema, which it gives back when it closes. */
class StoreOnLentSchema extends PgStore {
  readonly #schema: string;
  readonly #lender: SchemaLender;

  constructor(lender: SchemaLender, now: () => number) {
    const schema = lender.lend();
    super({ connectionString: TEST_DATABASE_URL, schema, now });
    this.#schema = schema;
    this.#lender = lender;
  }

  override async close(): Promise<void> {
    await super.close();
    await this.#lender.giveBack(this.#schema);
  }
}

describe('PostgreSQL', postgres, () => {
  const schema = freshSchemas();
  const lender = schemaLender();

  storeConformance('PgStore', async (clock) => new StoreOnLentSchema(lender, () => clock.now));

  describe('PgStore', () => {
    /** A raw connection for looking behind the store. */
    let raw: pg.Client;
    before(async () => {
      raw = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await raw.connect();
    });
    after(() => raw.end());

    type StoresTest = (stores: PgStore[], schemaName: string) => Promise<void>;

    /**
     * Stores on one schema, each with its own pool (as separate processes would be), closed afterwards: an
     * emptied schema lent for the test.
     */
    async function withStores(
      count: number,
      test: StoresTest,
      options: Partial<PgStoreOptions> = {},
    ): Promise<void> {
      const lent = lender.lend();
      try {
        await withStoresOn(lent, count, test, options);
      } finally {
        await lender.giveBack(lent);
      }
    }

    /** `withStores` on a fresh schema, for the tests of migrating one. */
    function withFreshStores(count: number, test: StoresTest, options: Partial<PgStoreOptions> = {}) {
      return withStoresOn(schema(), count, test, options);
    }

    async function withStoresOn(
      schemaName: string,
      count: number,
      test: StoresTest,
      options: Partial<PgStoreOptions>,
    ): Promise<void> {
      const stores = Array.from(
        { length: count },
        () =>
          new PgStore({ connectionString: TEST_DATABASE_URL, schema: schemaName, poolSize: 4, ...options }),
      );
      try {
        // Connections opened up front, so that no store starts its share of a race late.
        await Promise.all(stores.flatMap((store) => [store.ping(), store.ping(), store.ping()]));
        await test(stores, schemaName);
      } finally {
        await Promise.all(stores.map((store) => store.close()));
      }
    }

    it('reads the tasks asked for together in one group, each answer in its own scope', () =>
      withStores(1, async ([store]) => {
        assert.ok(store);
        await store.migrate();
        const [mine, theirs] = [await store.createAccount(), await store.createAccount()];
        const { model, params } = parseGenerationRequest({
          model: 'videogen-2.0-text-to-video',
          prompt: 'p',
        });
        const create = (accountId: string) =>
          store.createTask({
            accountId,
            environment: 'development',
            id: newTaskId(),
            model: model.id,
            params,
          });
        const [a, b] = [await create(mine.id), await create(theirs.id)];
        const scope = (accountId: string, environment: 'development' | 'production' = 'development') => ({
          accountId,
          environment,
        });
        // Asked for in one turn: one group, as polls arriving together are.
        const answers = await Promise.all([
          store.getTask(a.id, scope(mine.id)),
          store.getTask(a.id, scope(theirs.id)),
          store.getTask(a.id, scope(mine.id, 'production')),
          store.getTask(b.id),
          store.getTask(newTaskId(), scope(mine.id)),
          store.getTask(a.id, scope(mine.id)),
          store.getTask(b.id, scope(theirs.id)),
        ]);
        assert.deepEqual(
          answers.map((task) => task?.id),
          [a.id, undefined, undefined, b.id, undefined, a.id, b.id],
        );
        assert.deepEqual(answers[0], await store.getTask(a.id, scope(mine.id)), 'the same record as alone');
      }));

    it("lists a worker whose worker lock's session is gone, not before, and requeues its tasks when told", () =>
      withStores(2, async ([a, b]) => {
        assert.ok(a && b);
        await a.migrate();
        const account = await a.createAccount();
        const { model, params } = parseGenerationRequest({
          model: 'videogen-2.0-text-to-video',
          prompt: 'p',
        });
        const task = await a.createTask({
          accountId: account.id,
          environment: 'development',
          id: newTaskId(),
          model: model.id,
          params,
        });
        const lock = await a.holdWorkerLock('host-a-1-abcdef');
        await a.registerWorker('host-a-1-abcdef', [model.id], 60_000);
        const claimed = await a.claimTask({ workerId: 'host-a-1-abcdef', leaseMs: 60_000, maxAttempts: 3 });
        assert.equal(claimed?.id, task.id);
        assert.deepEqual(await b.listLocklessWorkers(), [], 'its session holds the lock');
        assert.equal((await b.getTask(task.id))?.status, 'processing');
        await lock.release();
        assert.deepEqual(await b.listLocklessWorkers(), ['host-a-1-abcdef'], 'the session ended');
        assert.equal(
          await b.requeueOrphanedTasks(['host-a-1-abcdef']),
          1,
          'requeued, without waiting for the lease',
        );
        const requeued = await b.getTask(task.id);
        assert.equal(requeued?.status, 'pending');
        assert.equal(requeued?.attempts, 0);
        assert.deepEqual(await b.servedModels(), new Set());
      }));

    it("takes its worker lock again when the lock's connection is reset, so that it is missing only a moment", () =>
      withStores(2, async ([a, b], schemaName) => {
        assert.ok(a && b);
        await a.migrate();
        const workerId = 'host-a-2-abcdef';
        const lock = await a.holdWorkerLock(workerId);
        await a.registerWorker(workerId, ['videogen-2.0-text-to-video'], 60_000);
        const holder = async () => {
          const { rows } = await raw.query<{ pid: number }>(
            `select pid from pg_locks where locktype = 'advisory' and granted and classid = $1::oid
               and objid = hashtext($2)::oid`,
            [WORKER_LOCK_CLASS, `${schemaName}:${workerId}`],
          );
          return rows[0]?.pid;
        };
        const before = await holder();
        assert.ok(before);
        await raw.query('select pg_terminate_backend($1)', [before]);
        const after = await until(async () => {
          const pid = await holder();
          return pid !== undefined && pid !== before && pid;
        }, 'the lock taken again on a new connection');
        assert.notEqual(after, before);
        assert.deepEqual(await b.listLocklessWorkers(), [], 'held again');
        await lock.release();
      }));

    async function tablesIn(schemaName: string): Promise<string[]> {
      const { rows } = await raw.query<{ table_name: string }>(
        'select table_name from information_schema.tables where table_schema = $1 order by table_name',
        [schemaName],
      );
      return rows.map((row) => row.table_name);
    }

    async function addTasks(store: PgStore, count: number): Promise<TaskRecord[]> {
      const { id: accountId } = await store.createAccount();
      const tasks: TaskRecord[] = [];
      for (let i = 0; i < count; i++) {
        tasks.push(
          await store.createTask({
            accountId,
            environment: 'development',
            id: newTaskId(),
            model: 'videogen-2.0-text-to-video',
            params: PARAMS,
          }),
        );
      }
      return tasks;
    }

    interface Recorded<T> {
      readonly result: T;
      readonly statements: string[];
      /** The statements sent as named prepared statements (pg-named-statements.ts). */
      readonly named: string[];
    }

    /**
     * The SQL of every statement the process's pg clients send while `run` runs (pg's `Client.query`, which
     * Kysely's pool connections call once a statement); nothing else of the process may query meanwhile.
     */
    async function statementsOf<T>(run: () => Promise<T>): Promise<Recorded<T>> {
      const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
      const query = prototype.query;
      const statements: string[] = [];
      const named: string[] = [];
      prototype.query = function (this: pg.Client, ...args: unknown[]) {
        const [first] = args;
        const text = typeof first === 'string' ? first : String((first as { text?: unknown }).text);
        statements.push(text);
        if (typeof first === 'object' && first !== null && 'name' in first) named.push(text);
        return query.apply(this, args);
      };
      try {
        return { result: await run(), statements, named };
      } finally {
        prototype.query = query;
      }
    }

    /** The first word of each statement, and whether a `SELECT` locks `FOR UPDATE`. */
    const shapes = (statements: readonly string[]) =>
      statements.map((statement) => {
        const verb = statement.trimStart().split(/\s/, 1)[0]?.toLowerCase() ?? '';
        return / for update$/i.test(statement.trim()) ? `${verb} for update` : verb;
      });

    /** The one-statement creation's shape: a CTE ending in the task's insert. */
    /** Creation's one statement, for one task or a group (store/pg/pg-create-tasks.ts), its columns listed. */
    const ONE_STATEMENT =
      /^with candidates as .*jsonb_populate_recordset.*\sinsert into tasks\s.*\sreturning id(, [a-z_]+)+$/s;

    function newTask(accountId: string, extra: Partial<NewTask> = {}): NewTask {
      return {
        accountId,
        environment: 'development',
        id: newTaskId(),
        model: 'videogen-2.0-text-to-video',
        params: PARAMS,
        ...extra,
      };
    }

    async function newKey(store: PgStore, accountId: string, limits?: UsageLimits): Promise<string> {
      const n = Math.random().toString(36).slice(2);
      const key = await store.createApiKey({
        accountId,
        name: 'k',
        environment: 'development',
        prefix: `p_${n}`,
        hash: `h_${n}`,
        ...(limits && { limits }),
      });
      return key.id;
    }

    it('creates a task in one statement when no monthly limit applies, in the transaction when one does', () =>
      withStores(1, async ([store], schemaName) => {
        assert.ok(store);
        await store.migrate();
        const { id: accountId } = await store.createAccount();
        const unlimitedKey = await newKey(store, accountId);
        const limitedKey = await newKey(store, accountId, {
          monthlyVideoSeconds: 6,
          monthlyBudgetMicros: null,
        });

        const extras: Partial<NewTask>[] = [
          {},
          { apiKeyId: unlimitedKey },
          { apiKeyId: 'key_without_a_row' },
        ];
        for (const extra of extras) {
          const task = newTask(accountId, extra);
          const { result, statements, named }: Recorded<TaskRecord> = await statementsOf(() =>
            store.createTask(task),
          );
          assert.equal(result.id, task.id);
          assert.equal(statements.length, 1, `${JSON.stringify(extra)}: ${shapes(statements).join(', ')}`);
          assert.match(statements[0] ?? '', ONE_STATEMENT);
          assert.deepEqual(named, statements, 'sent as a named prepared statement');
        }

        // The transaction after the statement that inserted nothing: the limits, the lock, the sums, the inserts.
        const limited = await statementsOf(() =>
          store.createTask(newTask(accountId, { apiKeyId: limitedKey })),
        );
        assert.match(limited.statements[0] ?? '', ONE_STATEMENT);
        assert.deepEqual(shapes(limited.statements).slice(1), [
          'begin',
          'select',
          'select for update',
          'select',
          'insert',
          'insert',
          'commit',
        ]);
        const refused = await statementsOf(() =>
          store.createTask(newTask(accountId, { apiKeyId: limitedKey })).catch((error: unknown) => error),
        );
        assert.ok(refused.result instanceof BudgetExceeded, "past the key's limit");
        assert.equal(refused.result.refusal.holder, 'api_key');
        assert.deepEqual(shapes(refused.statements), [
          'with',
          'begin',
          'select',
          'select for update',
          'select',
          'rollback',
        ]);

        await store.setAccountLimits(accountId, { monthlyVideoSeconds: null, monthlyBudgetMicros: 1 });
        for (const extra of extras.slice(0, 2)) {
          const onAccount: Recorded<TaskRecord> = await statementsOf(() =>
            store.createTask(newTask(accountId, extra)),
          );
          assert.deepEqual(shapes(onAccount.statements), [
            'with',
            'begin',
            'select',
            'select for update',
            'select',
            'insert',
            'insert',
            'commit',
          ]);
        }
        await store.setAccountLimits(accountId, NO_LIMITS);

        // No account with the id: nothing inserted, then the transaction fails on the task's foreign key.
        const orphan = newTask('acct_without_a_row');
        const missing = await statementsOf(() => store.createTask(orphan).catch((error: unknown) => error));
        assert.match(String(missing.result), /foreign key/);
        assert.deepEqual(shapes(missing.statements), [
          'with',
          'begin',
          'select',
          'insert',
          'insert',
          'rollback',
        ]);
        const { rows } = await raw.query<{ count: string }>(
          `select count(*) from "${schemaName}".usage_records where task_id = $1`,
          [orphan.id],
        );
        assert.equal(rows[0]?.count, '0', 'no reservation outlives the refused creation');
      }));

    it('creates tasks made together in one statement; one that fails fails alone, one under a limit goes to the transaction', () =>
      withStores(1, async ([store], schemaName) => {
        assert.ok(store);
        await store.migrate();
        const { id: accountId } = await store.createAccount();
        const limitedKey = await newKey(store, accountId, {
          monthlyVideoSeconds: 6,
          monthlyBudgetMicros: null,
        });
        const reservations = async (ids: readonly string[]) => {
          const { rows } = await raw.query<{ task_id: string }>(
            `select task_id from "${schemaName}".usage_records where task_id = any($1) order by task_id`,
            [ids],
          );
          return rows.map((row) => row.task_id);
        };

        const together = [newTask(accountId), newTask(accountId), newTask(accountId, { apiKeyId: 'k_none' })];
        const grouped = await statementsOf(() => Promise.all(together.map((task) => store.createTask(task))));
        assert.deepEqual(
          grouped.result.map((task) => [task.id, task.status]),
          together.map((task) => [task.id, 'pending']),
        );
        assert.equal(grouped.statements.length, 1, shapes(grouped.statements).join(', '));
        assert.match(grouped.statements[0] ?? '', ONE_STATEMENT);
        for (const task of together)
          assert.deepEqual(await store.getTask(task.id), grouped.result[together.indexOf(task)]);
        assert.deepEqual(
          await reservations(together.map((task) => task.id)),
          together.map((task) => task.id).sort(),
        );

        // Left out of the group's statement, the limited one is created by the transaction; the other is not held up.
        const [free, limited] = [newTask(accountId), newTask(accountId, { apiKeyId: limitedKey })];
        const mixed = await statementsOf(() =>
          Promise.all([store.createTask(free), store.createTask(limited)]),
        );
        assert.deepEqual(
          mixed.result.map((task) => task.id),
          [free.id, limited.id],
        );
        assert.deepEqual(shapes(mixed.statements), [
          'with',
          'begin',
          'select',
          'select for update',
          'select',
          'insert',
          'insert',
          'commit',
        ]);
        assert.match(mixed.statements[0] ?? '', ONE_STATEMENT);

        // A duplicate id fails the group's statement: each is then tried alone, and only the duplicate fails. The
        // limited one is past its key's 6 s now, and refused as alone.
        const [first, last] = [newTask(accountId), newTask(accountId)];
        const duplicate = newTask(accountId, { id: free.id, params: { ...PARAMS, prompt: 'again' } });
        const overLimit = newTask(accountId, { apiKeyId: limitedKey });
        const failing = await statementsOf(() =>
          Promise.allSettled([first, duplicate, overLimit, last].map((task) => store.createTask(task))),
        );
        const [madeFirst, refusedDuplicate, refusedLimit, madeLast] = failing.result;
        assert.equal(madeFirst?.status === 'fulfilled' && madeFirst.value.id, first.id);
        assert.equal(madeLast?.status === 'fulfilled' && madeLast.value.id, last.id);
        assert.equal(refusedDuplicate?.status, 'rejected');
        assert.match(
          String(refusedDuplicate?.status === 'rejected' && refusedDuplicate.reason),
          /duplicate key/,
        );
        assert.ok(refusedLimit?.status === 'rejected' && refusedLimit.reason instanceof BudgetExceeded);
        assert.match(failing.statements[0] ?? '', ONE_STATEMENT);
        assert.equal(
          failing.statements.slice(1).filter((statement) => ONE_STATEMENT.test(statement)).length,
          4,
          'each tried alone after the group failed',
        );
        assert.equal(
          (await store.getTask(free.id))?.params.prompt,
          PARAMS.prompt,
          'the first task is unchanged',
        );
        assert.equal(await store.getTask(overLimit.id), undefined);
        assert.deepEqual(
          await reservations([first.id, duplicate.id, overLimit.id, last.id]),
          [first.id, free.id, last.id].sort(),
          "the duplicate's failure took no reservation of its own, the refusal none",
        );
      }));

    it('sends the one-statement creation and claim as named statements, which still run after a migration adds a column', () =>
      // A schema of its own: the column it adds must not reach the schemas lent to other tests.
      withFreshStores(
        1,
        async ([store], schemaName) => {
          assert.ok(store);
          await store.migrate();
          const { id: accountId } = await store.createAccount();
          const routing = {
            routes: new Map([['videogen-2.0-text-to-video' as const, [[{ engine: 'local', weight: 1 }]]]]),
            maxConcurrency: new Map<string, number>(),
            circuit: { failures: 3, cooldownMs: 60_000 },
          };
          const createAndClaim = async () => {
            const task = newTask(accountId, { params: { ...PARAMS, callback_url: null } });
            await store.createTask(task);
            const claimed = await store.claimTask({
              workerId: 'w',
              leaseMs: 60_000,
              maxAttempts: 3,
              routing,
            });
            assert.equal(claimed?.id, task.id);
            assert.equal(claimed?.engine, 'local');
            return claimed;
          };
          const first = await statementsOf(createAndClaim);
          assert.equal(first.named.length, 2, shapes(first.statements).join(', '));
          assert.match(first.named[0] ?? '', ONE_STATEMENT);
          assert.match(first.named[1] ?? '', /^update "tasks" set .* returning "id", .*, "[a-z_]+"$/s);
          // Prepared on the pool's one connection; a newer process's migration then adds a column. A statement
          // returning `*` would now fail there ("cached plan must not change result type").
          await raw.query(`alter table "${schemaName}".tasks add column added_later text`);
          const second = await statementsOf(createAndClaim);
          assert.deepEqual(second.named, first.named);
        },
        // One connection, so that the second round runs the statements the first prepared.
        { poolSize: 1 },
      ));

    it('creates under a new idempotency key in one statement; a repeat goes through the transaction', () =>
      withStores(1, async ([store]) => {
        assert.ok(store);
        await store.migrate();
        const { id: accountId } = await store.createAccount();
        const key = { key: 'k-1', requestHash: 'h', since: 0 };
        const first = await statementsOf(() => store.createTaskOnce(newTask(accountId), key));
        assert.equal(first.result.outcome, 'created');
        assert.equal(first.statements.length, 1, shapes(first.statements).join(', '));
        assert.match(first.statements[0] ?? '', ONE_STATEMENT);
        assert.match(first.statements[0] ?? '', /insert into idempotency_keys\s.* on conflict/s);

        const again = await statementsOf(() => store.createTaskOnce(newTask(accountId), key));
        assert.ok(again.result.outcome === 'replayed' && first.result.outcome === 'created');
        assert.equal(again.result.task.id, first.result.task.id);
        assert.deepEqual(shapes(again.statements), ['with', 'begin', 'insert', 'select', 'select', 'commit']);

        await store.setAccountLimits(accountId, { monthlyVideoSeconds: 5, monthlyBudgetMicros: null });
        const refused = await statementsOf(() =>
          store.createTaskOnce(newTask(accountId), { ...key, key: 'k-2' }).catch((error: unknown) => error),
        );
        assert.ok(refused.result instanceof BudgetExceeded);
        assert.equal(shapes(refused.statements).at(-1), 'rollback');
        await store.setAccountLimits(accountId, NO_LIMITS);
        const later = await store.createTaskOnce(newTask(accountId), { ...key, key: 'k-2' });
        assert.equal(later.outcome, 'created', 'the refused creation kept no key');

        // Keys in a group: the new ones made by the group's one statement; a key again in the group, after the
        // statement, by the transaction: replayed for the same request, a conflict for another.
        const [firstOfG1, firstOfG2] = [newTask(accountId), newTask(accountId)];
        const once = (task: NewTask, name: string, requestHash = 'h') =>
          store.createTaskOnce(task, { key: name, requestHash, since: 0 });
        const group = await statementsOf(() =>
          Promise.all([
            once(firstOfG1, 'g-1'),
            once(newTask(accountId), 'g-1'),
            once(newTask(accountId), 'g-1', 'another request'),
            once(firstOfG2, 'g-2'),
            once(newTask(accountId), 'k-2'),
          ]),
        );
        assert.deepEqual(
          group.result.map((outcome) => outcome.outcome),
          ['created', 'replayed', 'conflict', 'created', 'replayed'],
        );
        assert.deepEqual(
          group.result.map((outcome) => (outcome.outcome === 'conflict' ? undefined : outcome.task.id)),
          [firstOfG1.id, firstOfG1.id, undefined, firstOfG2.id, later.outcome === 'created' && later.task.id],
        );
        assert.match(group.statements[0] ?? '', ONE_STATEMENT);
        assert.equal(group.statements.filter((statement) => ONE_STATEMENT.test(statement)).length, 1);
      }));

    it('inserts the same rows in one statement, alone or grouped, as in the transaction, column by column', () =>
      withStores(
        1,
        async ([store], schemaName) => {
          assert.ok(store);
          await store.migrate();
          const { id: accountId } = await store.createAccount();
          const keyId = await newKey(store, accountId);
          const lots: UsageLimits = { monthlyVideoSeconds: 1_000_000, monthlyBudgetMicros: 1_000_000_000 };
          const task = (id: string) =>
            newTask(accountId, {
              id,
              apiKeyId: keyId,
              costMicros: 1_250_000,
              params: { ...PARAMS, seed: 3 },
            });
          const ids = { statement: newTaskId(), transaction: newTaskId() };
          const onceIds = { statement: newTaskId(), transaction: newTaskId() };
          const groupedIds = { statement: newTaskId(), transaction: ids.transaction };
          const statement = await statementsOf(async () => {
            await store.createTask(task(ids.statement));
            await store.createTaskOnce(task(onceIds.statement), { key: 'one', requestHash: 'h', since: 0 });
            await Promise.all([
              store.createTask(task(groupedIds.statement)),
              store.createTask(task(newTaskId())),
            ]);
          });
          assert.equal(statement.statements.length, 3);
          await store.setApiKeyLimits(keyId, lots, accountId);
          const transaction = await statementsOf(async () => {
            await store.createTask(task(ids.transaction));
            await store.createTaskOnce(task(onceIds.transaction), { key: 'two', requestHash: 'h', since: 0 });
          });
          assert.ok(transaction.statements.includes('commit'), 'the limit sent both through the transaction');

          const rowsOf = async (table: string, column: string, id: string) => {
            const { rows } = await raw.query<Record<string, unknown>>(
              `select * from "${schemaName}".${table} where ${column} = $1`,
              [id],
            );
            assert.equal(rows.length, 1, `${table} ${id}`);
            return rows[0] ?? {};
          };
          const apart = (row: Record<string, unknown>, ...columns: string[]) =>
            Object.fromEntries(Object.entries(row).filter(([column]) => !columns.includes(column)));
          for (const pair of [ids, onceIds, groupedIds]) {
            const tasks = [
              await rowsOf('tasks', 'id', pair.statement),
              await rowsOf('tasks', 'id', pair.transaction),
            ];
            assert.deepEqual(apart(tasks[0] ?? {}, 'id'), apart(tasks[1] ?? {}, 'id'));
            assert.deepEqual(Object.keys(tasks[0] ?? {}).length, 24);
            assert.equal(String(tasks[0]?.cost), '1250000', "the task keeps its usage record's cost");
            const usage = [
              await rowsOf('usage_records', 'task_id', pair.statement),
              await rowsOf('usage_records', 'task_id', pair.transaction),
            ];
            assert.deepEqual(apart(usage[0] ?? {}, 'task_id'), apart(usage[1] ?? {}, 'task_id'));
            assert.deepEqual(Object.keys(usage[0] ?? {}).length, 15);
          }
          const keys = [
            await rowsOf('idempotency_keys', 'task_id', onceIds.statement),
            await rowsOf('idempotency_keys', 'task_id', onceIds.transaction),
          ];
          assert.deepEqual(apart(keys[0] ?? {}, 'key', 'task_id'), apart(keys[1] ?? {}, 'key', 'task_id'));
          assert.deepEqual([keys[0]?.key, keys[1]?.key], ['one', 'two']);
        },
        // One clock for both ways: their rows differ in nothing but their ids.
        { now: () => 1_700_000_000_000 },
      ));

    it('migrates one fresh schema from several stores at once, and another beside it', async () => {
      const other = schema();
      const elsewhere = Array.from(
        { length: 3 },
        () => new PgStore({ connectionString: TEST_DATABASE_URL, schema: other, poolSize: 2 }),
      );
      try {
        await withFreshStores(6, async (stores, schemaName) => {
          await Promise.all([...stores, ...elsewhere].map((store) => store.migrate()));
          for (const name of [schemaName, other]) {
            assert.deepEqual(await tablesIn(name), TABLES);
            const { rows } = await raw.query<{ name: string }>(
              `select name from "${name}".kysely_migration order by name`,
            );
            assert.deepEqual(
              rows.map((row) => row.name),
              Object.keys(MIGRATIONS).sort(),
            );
          }
          const [first, second] = stores;
          assert.ok(first && second);
          await first.createAccount();
          assert.equal(await second.countAccounts(), 1);
          assert.equal(await elsewhere[0]?.countAccounts(), 0, 'the other schema is a separate store');
        });
      } finally {
        await Promise.all(elsewhere.map((store) => store.close()));
      }
    });

    it('finds a migrated schema up to date without the migration lock', { timeout: 30_000 }, (t) =>
      withStores(2, async ([first, second]) => {
        assert.ok(first && second);
        await first.migrate();
        await first.createAccount();
        const unlock = () => raw.query('select pg_advisory_unlock($1::bigint)', [MIGRATION_LOCK_KEY]);
        await raw.query('select pg_advisory_lock($1::bigint)', [MIGRATION_LOCK_KEY]);
        // Past the time limit the lock goes, so that a failure does not hold up every other migration.
        const onTimeout = () => void unlock();
        t.signal.addEventListener('abort', onTimeout);
        try {
          await second.migrate();
        } finally {
          t.signal.removeEventListener('abort', onTimeout);
          await unlock();
        }
        assert.equal(await second.countAccounts(), 1);
      }),
    );

    it('never hands one task to two stores claiming at once', () =>
      withStores(5, async (stores) => {
        const [first] = stores;
        assert.ok(first);
        await first.migrate();
        // Every store's connections opened first, by claims that find nothing: otherwise the store that migrated,
        // already connected, can take all 50 while the others connect on a loaded machine.
        await Promise.all(
          stores.flatMap((store, s) =>
            Array.from({ length: 3 }, (_, slot) =>
              store.claimTask({ workerId: `warm-${s}-${slot}`, leaseMs: 60_000, maxAttempts: 3 }),
            ),
          ),
        );
        const tasks = await addTasks(first, 50);
        // Three claim loops per store, as a worker pool's slots would run.
        const perStore = await Promise.all(
          stores.map(async (store, s) => {
            const got: TaskRecord[] = [];
            await Promise.all(
              Array.from({ length: 3 }, async (_, slot) => {
                const workerId = `store-${s}-slot-${slot}`;
                for (
                  let task = await store.claimTask({ workerId, leaseMs: 60_000, maxAttempts: 3 });
                  task;
                  task = await store.claimTask({ workerId, leaseMs: 60_000, maxAttempts: 3 })
                ) {
                  got.push(task);
                }
              }),
            );
            return got;
          }),
        );
        const claimed = perStore.flat();
        // SKIP LOCKED may let a claimer see nothing while a row is held for an instant; whatever is left over
        // is still claimable, once.
        for (
          let task = await first.claimTask({ workerId: 'late', leaseMs: 60_000, maxAttempts: 3 });
          task;
          task = await first.claimTask({ workerId: 'late', leaseMs: 60_000, maxAttempts: 3 })
        ) {
          claimed.push(task);
        }
        assert.equal(claimed.length, 50);
        assert.deepEqual(new Set(claimed.map((task) => task.id)), new Set(tasks.map((task) => task.id)));
        assert.ok(perStore.filter((got) => got.length > 0).length > 1, 'the stores shared the work');
        for (const task of claimed) {
          assert.equal(task.attempts, 1);
          assert.deepEqual(await first.getTask(task.id), task);
        }
      }));

    it('never hands one delivery to two stores claiming at once', () =>
      withStores(5, async (stores) => {
        const [first] = stores;
        assert.ok(first);
        await first.migrate();
        const [task] = await addTasks(first, 1);
        assert.ok(task);
        // Every store's connections opened first, by claims that find nothing (as for tasks, above).
        await Promise.all(
          stores.flatMap((store, s) =>
            Array.from({ length: 2 }, (_, slot) =>
              store.claimDeliveries({
                workerId: `warm-${s}-${slot}`,
                leaseMs: 60_000,
                limit: 4,
                excludeHosts: [],
              }),
            ),
          ),
        );
        const ids = new Set<string>();
        for (let i = 0; i < 60; i++) {
          const delivery = deliveryFor(task);
          assert.ok(delivery);
          ids.add((await first.createDelivery(delivery)).id);
        }
        const claimAll = async (store: PgStore, workerId: string, into: DeliveryRecord[]) => {
          const options = { workerId, leaseMs: 60_000, limit: 4, excludeHosts: [] };
          for (let got = await store.claimDeliveries(options); got.length > 0; ) {
            assert.ok(
              got.length <= options.limit,
              `${got.length} deliveries claimed with limit ${options.limit}`,
            );
            into.push(...got);
            got = await store.claimDeliveries(options);
          }
        };
        const perStore = await Promise.all(
          stores.map(async (store, s) => {
            const got: DeliveryRecord[] = [];
            await Promise.all(Array.from({ length: 2 }, (_, slot) => claimAll(store, `s${s}-${slot}`, got)));
            return got;
          }),
        );
        const claimed = perStore.flat();
        await claimAll(first, 'late', claimed);
        assert.equal(claimed.length, 60);
        assert.deepEqual(new Set(claimed.map((delivery) => delivery.id)), ids);
        assert.ok(perStore.filter((got) => got.length > 0).length > 1, 'the stores shared the work');
        const listed = await first.listDeliveries(task.id);
        assert.equal(listed.length, 60);
        for (const delivery of listed) assert.equal(delivery.attemptCount, 1);
      }));

    it('claims at most `limit` deliveries, the oldest due first', async () => {
      let now = 1_000;
      await withStores(
        1,
        async ([store]) => {
          assert.ok(store);
          await store.migrate();
          const [task] = await addTasks(store, 1);
          assert.ok(task);
          const ids: string[] = [];
          for (let i = 0; i < 18; i++) {
            now += 10;
            const delivery = deliveryFor(task);
            assert.ok(delivery);
            ids.push((await store.createDelivery(delivery)).id);
          }
          const claims: string[][] = [];
          for (let i = 0; i < 6; i++) {
            const got = await store.claimDeliveries({
              workerId: 'w',
              leaseMs: 60_000,
              limit: 4,
              excludeHosts: [],
            });
            claims.push(got.map((delivery) => delivery.id));
          }
          assert.deepEqual(claims, [
            ids.slice(0, 4),
            ids.slice(4, 8),
            ids.slice(8, 12),
            ids.slice(12, 16),
            ids.slice(16, 18),
            [],
          ]);
        },
        { now: () => now },
      );
    });

    it("sees another process's circuit open within CIRCUITS_TTL_MS, and its own at once; decides a trial on the store's", async () => {
      let now = 1_700_000_000_000;
      await withFreshStores(
        2,
        async ([a, b]) => {
          assert.ok(a && b);
          await a.migrate();
          // Without a callback: claimed in one statement, which goes by the cached circuits (a claim in a
          // transaction reads them afresh).
          await addTextTasks(a, 8, { ...PARAMS, callback_url: null });
          assert.equal(await engineOfNextClaim(a), 'ark');
          // b's outcome opens the circuit; a goes by the circuits it read until they are CIRCUITS_TTL_MS old.
          await b.recordEngineOutcome('ark', 'unavailable', CIRCUIT_POLICY);
          assert.equal(await engineOfNextClaim(b), 'gpu', 'the process that opened it, at once');
          now += CIRCUITS_TTL_MS - 1;
          assert.equal(await engineOfNextClaim(a), 'ark', 'read less than CIRCUITS_TTL_MS ago');
          now += 1;
          assert.equal(await engineOfNextClaim(a), 'gpu');
          // b read the circuit open just before its cool-down ends; a takes the trial once it has.
          now += CIRCUIT_POLICY.cooldownMs - CIRCUITS_TTL_MS - 1;
          assert.equal(await engineOfNextClaim(b), 'gpu', 'still open');
          now += 1;
          assert.equal(await engineOfNextClaim(a), 'ark', 'the trial');
          // By what b read, the trial is still free: b's claim goes to a transaction, which reads them afresh.
          assert.equal(await engineOfNextClaim(b), 'gpu', 'the trial is taken: the next step');
          // a's own outcome (closing it) is seen by a at once.
          await a.recordEngineOutcome('ark', 'succeeded', CIRCUIT_POLICY);
          assert.equal(await engineOfNextClaim(a), 'ark');
        },
        { now: () => now },
      );
    });

    it('passes over tasks and deliveries another transaction has locked, without waiting', () =>
      withStores(1, async ([store], schemaName) => {
        assert.ok(store);
        await store.migrate();
        const [held, free] = await addTasks(store, 2);
        assert.ok(held && free);
        const deliveries: string[] = [];
        for (const task of [held, free]) {
          const delivery = deliveryFor(task);
          assert.ok(delivery);
          deliveries.push((await store.createDelivery(delivery)).id);
        }
        await raw.query('begin');
        try {
          await raw.query(`select id from "${schemaName}".tasks where id = $1 for update`, [held.id]);
          await raw.query(`select id from "${schemaName}".webhook_deliveries where id = $1 for update`, [
            deliveries[0],
          ]);
          const task = await store.claimTask({ workerId: 'w', leaseMs: 60_000, maxAttempts: 3 });
          assert.equal(task?.id, free.id);
          const claimed = await store.claimDeliveries({
            workerId: 'w',
            leaseMs: 60_000,
            limit: 10,
            excludeHosts: [],
          });
          // The claim of `free` queued its task.processing callback, which is free too.
          assert.ok(!claimed.some((delivery) => delivery.id === deliveries[0]));
          assert.ok(claimed.some((delivery) => delivery.id === deliveries[1]));
        } finally {
          await raw.query('rollback');
        }
        assert.equal(
          (await store.claimTask({ workerId: 'w', leaseMs: 60_000, maxAttempts: 3 }))?.id,
          held.id,
        );
      }));

    // On a fresh schema: the planner's statistics are those of this test's tasks alone.
    it('reads every page of GET /v1/tasks by one index scan in order, with no sort, however deep', () =>
      withFreshStores(1, async ([store], schemaName) => {
        assert.ok(store);
        await store.migrate();
        const accounts = [(await store.createAccount()).id, (await store.createAccount()).id];
        const tasks = `"${schemaName}".tasks`;
        // Enough tasks, and statistics on them, for the planner to choose as it would in production.
        await raw.query(
          `insert into ${tasks} (id, account_id, environment, model, status, progress, params, attempts,
                                 created_at, updated_at)
           select 'task-unified-' || lpad(g::text, 26, '0'),
                  case when hashint4(g) % 3 = 0 then $2 else $1 end,
                  case when hashint4(g + 100000) % 5 = 0 then 'development' else 'production' end,
                  (array['videogen-2.0-text-to-video', 'videogen-2.0-image-to-video',
                         'videogen-2.0-reference-to-video', 'videogen-2.0-fast-text-to-video',
                         'videogen-2.0-fast-image-to-video',
                         'videogen-2.0-fast-reference-to-video'])[1 + abs(hashint4(g + 200000)) % 6],
                  case when g > 29950 then 'pending' when abs(hashint4(g + 300000)) % 100 < 7 then 'failed'
                       else 'completed' end,
                  100, '{}', 1, 1700000000000 + g * 50, 1700000000000 + g * 50
             from generate_series(1, 30000) as g`,
          accounts,
        );
        await raw.query(`analyze ${tasks}`);
        const planner = new pg.Client({ connectionString: TEST_DATABASE_URL });
        await planner.connect();
        try {
          await planner.query(`set search_path to "${schemaName}"`);
          for (const { name, query } of plannedPages()) {
            const { sql, parameters } = compiledPage(
              'postgres',
              { accountId: accounts[0] ?? '', environment: 'production' },
              query,
            );
            const { rows } = await planner.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
              `explain (format json) ${sql}`,
              [...parameters],
            );
            const nodes = planNodes(rows[0]?.['QUERY PLAN'][0].Plan);
            const types = nodes.map((node) => node['Node Type']);
            assert.ok(!types.some((type) => type.includes('Sort')), `${name}: ${types.join(' > ')}`);
            const scans = nodes.filter((node) => node['Index Name']);
            assert.equal(scans.length, 1, `${name}: ${types.join(' > ')}`);
            // A page of one status may also go by claiming's (status, created_at, id), in order too, when the
            // planner reckons the scope's matches come soon enough in it.
            const index =
              query.status && query.model
                ? 'tasks_list_status_model'
                : query.status
                  ? '(tasks_list_status|tasks_claim)'
                  : query.model
                    ? 'tasks_list_model'
                    : 'tasks_list';
            assert.match(scans[0]?.['Index Name'] ?? '', new RegExp(`^${index}$`), name);
            if (query.after) {
              assert.match(
                scans[0]?.['Index Cond'] ?? '',
                /ROW\(created_at, id\) < ROW/,
                `${name}: the cursor bounds the scan`,
              );
            }
          }
        } finally {
          await planner.end();
        }
      }));

    it('round-trips epoch milliseconds through bigint columns exactly, from 0 to 2^53 - 1', async () => {
      for (const at of [0, 1_700_000_000_123, Number.MAX_SAFE_INTEGER - 120_000]) {
        let now = at;
        await withStores(
          1,
          async ([store], schemaName) => {
            assert.ok(store);
            await store.migrate();
            const [task] = await addTasks(store, 1);
            assert.ok(task);
            assert.equal(task.createdAt, at);
            now = at + 7;
            const claimed = await store.claimTask({ workerId: 'w', leaseMs: 60_000, maxAttempts: 3 });
            assert.equal(claimed?.leaseExpiresAt, at + 7 + 60_000);
            assert.equal(claimed?.updatedAt, at + 7);
            assert.deepEqual(await store.getTask(task.id), claimed);
            const stats = await store.queueStats();
            assert.equal(stats.now, at + 7);
            assert.equal(stats.expiredLeases, 0);
            const [delivery] = await store.listDeliveries(task.id);
            assert.equal(delivery?.createdAt, at + 7);
            assert.equal(delivery?.nextAttemptAt, at + 7);
            const { rows } = await raw.query<{ type: string; value: string }>(
              `select pg_typeof(lease_expires_at)::text as type, lease_expires_at::text as value
                 from "${schemaName}".tasks where id = $1`,
              [task.id],
            );
            assert.deepEqual(rows, [{ type: 'bigint', value: String(at + 7 + 60_000) }]);
          },
          { now: () => now },
        );
      }
    });

    it('keeps everything in its schema, whatever search_path the URL asks for', async () => {
      const url = new URL(TEST_DATABASE_URL);
      url.searchParams.set('options', '-c search_path=public');
      await withFreshStores(
        1,
        async ([store], schemaName) => {
          assert.ok(store);
          await store.migrate();
          await store.createAccount();
          assert.deepEqual(await tablesIn(schemaName), TABLES);
          const { rows } = await raw.query<{ count: string }>(
            `select count(*) from "${schemaName}".accounts`,
          );
          assert.equal(rows[0]?.count, '1');
        },
        { connectionString: url.href },
      );
    });

    it('backfills webhook secrets (migration 0002) in its own schema only', async () => {
      // A neighbour fully migrated, with accounts the backfill must not touch.
      const neighbourSchema = schema();
      const neighbour = new PgStore({ connectionString: TEST_DATABASE_URL, schema: neighbourSchema });
      await neighbour.migrate();
      await neighbour.createAccount();
      await neighbour.createAccount();
      await neighbour.close();

      await withFreshStores(1, async ([store], schemaName) => {
        assert.ok(store);
        // The schema as a server of the first release left it: 0001 applied, with an account.
        const { db } = openPgDatabase({ connectionString: TEST_DATABASE_URL, schema: schemaName });
        try {
          const initial = MIGRATIONS['0001-initial'];
          assert.ok(initial);
          const { error } = await new Migrator({
            db,
            provider: { getMigrations: async () => ({ '0001-initial': initial }) },
            migrationTableSchema: schemaName,
          }).migrateToLatest();
          assert.ifError(error);
          await db.insertInto('accounts').values({ id: 'acct_old', created_at: 1 }).execute();
        } finally {
          await db.destroy();
        }

        await store.migrate();
        const secrets = await store.getWebhookSecrets('acct_old');
        assert.equal(secrets.length, 1);
        assert.match(secrets[0]?.secret ?? '', /^whsec_/);
        const { rows } = await raw.query<{ count: string }>(
          `select count(*) from "${schemaName}".webhook_secrets`,
        );
        assert.equal(rows[0]?.count, '1');
        const theirs = await raw.query<{ count: string }>(
          `select count(*) from "${neighbourSchema}".webhook_secrets`,
        );
        assert.equal(theirs.rows[0]?.count, '2');
      });
    });

    it('releases the migration locks when a migration fails', { timeout: 30_000 }, async () => {
      await withFreshStores(2, async ([broken, healthy], schemaName) => {
        assert.ok(broken && healthy);
        // A table in the way of migration 0001 makes it fail.
        await raw.query(`create schema "${schemaName}"`);
        await raw.query(`create table "${schemaName}".accounts (unrelated int)`);
        await assert.rejects(broken.migrate(), /migration 0001-initial failed/);
        await raw.query(`drop table "${schemaName}".accounts`);
        // Locks still held would make this wait for ever; the pools are per store, so a leaked session lock
        // on `broken`'s connection would block `healthy`.
        await healthy.migrate();
        assert.equal(await healthy.countAccounts(), 0);
      });
    });

    it('rides out a connection reset while a query holds the connection: the query fails, nothing crashes', async () => {
      const database = new URL(TEST_DATABASE_URL);
      const proxy = await CuttableTcpProxy.start({
        host: database.hostname,
        port: Number(database.port || 5432),
      });
      const throughProxy = new URL(TEST_DATABASE_URL);
      throughProxy.hostname = '127.0.0.1';
      throughProxy.port = String(proxy.port);
      const errors: Error[] = [];
      const store = new SleepingStore({
        connectionString: throughProxy.href,
        schema: schema(),
        poolSize: 1,
        onError: (error) => errors.push(error),
      });
      try {
        await store.migrate();
        // The pool's one client, checked out by a query still running when its connection is reset (without
        // a listener of its own on the client, pg's 'error' event ends the process).
        const sleeping = store.sleep();
        await until(
          async () =>
            (
              await raw.query(
                "select 1 from pg_stat_activity where query = 'select pg_sleep(30)' and state = 'active'",
              )
            ).rowCount === 1,
          'the query running',
        );
        proxy.cut();
        await assert.rejects(sleeping);
        proxy.restore();
        assert.equal(await store.countAccounts(), 0, 'the store works again once the database is back');
        assert.ok(errors.length > 0, 'the reset was reported');
      } finally {
        await store.close();
        await proxy.close();
      }
    });

    it('works on the default schema of its connection without a schema option', async () => {
      const schemaName = schema();
      await raw.query(`create schema "${schemaName}"`);
      const url = new URL(TEST_DATABASE_URL);
      url.searchParams.set('options', `-c search_path=${schemaName}`);
      const store = new PgStore({ connectionString: url.href });
      try {
        await store.migrate();
        await store.migrate();
        assert.deepEqual(await tablesIn(schemaName), TABLES);
      } finally {
        await store.close();
      }
    });
  });
});

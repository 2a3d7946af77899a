import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Kysely, SqliteDialect } from 'kysely';
import { newTaskId } from '../src/domain/identifiers.js';
import type { TaskRecord } from '../src/domain/task.js';
import { BudgetExceeded } from '../src/domain/usage.js';
import type { NewTask } from '../src/ports/store.js';
import type { Database } from '../src/store/database-schema.js';
import type { PreparedQuery } from '../src/store/prepared-query.js';
import { sqliteCreations } from '../src/store/sqlite/sqlite-creations.js';
import { openDatabase, prepare } from '../src/store/sqlite/sqlite-handles.js';
import { StatementCache } from '../src/store/sqlite/sqlite-statement-cache.js';
import { SqliteStatements } from '../src/store/sqlite/sqlite-statements.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { generationParams } from './helpers/generation-params.js';

const NOW = Date.UTC(2026, 10, 15);

describe('SQLite creations', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'videogen-sqlite-creations-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /**
   * A migrated file with an account without limits, one whose own limit is 10 s a month and a key of the first
   * limited to 6 s; then the groups over a connection of their own, every statement that goes through Kysely
   * logged and every one run straight counted.
   */
  async function setUp(name: string) {
    const path = join(dir, `${name}.db`);
    const store = new SqliteStore({ path, now: () => NOW });
    await store.migrate();
    const free = await store.createAccount();
    const capped = await store.createAccount();
    await store.setAccountLimits(capped.id, { monthlyVideoSeconds: 10, monthlyBudgetMicros: null });
    const limitedKey = await store.createApiKey({
      accountId: free.id,
      name: 'limited',
      environment: 'production',
      prefix: 'p_limited',
      hash: 'h_limited',
      limits: { monthlyVideoSeconds: 6, monthlyBudgetMicros: null },
    });
    await store.close();

    const database = openDatabase(path);
    const cache = new StatementCache(database);
    const throughKysely: string[] = [];
    const db = new Kysely<Database>({
      dialect: new SqliteDialect({ database: cache }),
      log: (event) => {
        throughKysely.push(event.query.sql);
      },
    });
    let straight = 0;
    const counted = new (class extends SqliteStatements {
      override all<Names extends string, Row>(
        query: PreparedQuery<Names, Row>,
        values: Readonly<Record<Names, unknown>>,
      ): Row[] {
        straight++;
        return super.all(query, values);
      }
      override run<Names extends string>(
        query: PreparedQuery<Names, unknown>,
        values: Readonly<Record<Names, unknown>>,
      ): void {
        straight++;
        super.run(query, values);
      }
    })(cache, db);
    const creations = sqliteCreations(db, { database, statements: counted });
    const create = (task: NewTask, key?: { key: string; requestHash: string }) =>
      creations.create({ task, now: NOW, ...(key && { idempotency: { ...key, since: 0 } }) });
    /** A creation without a key: its task (never replayed nor in conflict), or its rejection. */
    const createTask = async (task: NewTask): Promise<TaskRecord> => {
      const created = await create(task);
      if (created.outcome !== 'created') throw new Error(`a creation without a key was ${created.outcome}`);
      return created.task;
    };
    const newTask = (accountId: string, extra: Partial<NewTask> = {}): NewTask => ({
      accountId,
      environment: 'production',
      id: newTaskId(),
      model: 'videogen-2.0-text-to-video',
      params: generationParams({ duration: 5 }),
      ...extra,
    });
    const reservations = (ids: readonly string[]) =>
      ids.filter((id) => prepare(database, 'select 1 from usage_records where task_id = ?').get(id));
    const tasksIn = (ids: readonly string[]) =>
      ids.filter((id) => prepare(database, 'select 1 from tasks where id = ?').get(id));
    return {
      create,
      createTask,
      newTask,
      free: free.id,
      capped: capped.id,
      limitedKey: limitedKey.id,
      throughKysely,
      straightCount: () => straight,
      reservations,
      tasksIn,
      reservationCount: () =>
        (prepare(database, 'select count(*) as n from usage_records').get() as { n: number }).n,
      close: async () => {
        await creations.drain();
        await db.destroy();
      },
    };
  }

  it('writes creations without limits at once, in one transaction and without Kysely', async () => {
    const setup = await setUp('at-once');
    try {
      const tasks = [setup.newTask(setup.free), setup.newTask(setup.free), setup.newTask(setup.free)];
      const created = await Promise.all(tasks.map((task) => setup.createTask(task)));
      assert.deepEqual(
        created.map((task) => [task.id, task.status, task.params.duration]),
        tasks.map((task) => [task.id, 'pending', 5]),
      );
      // Per task: its limits read, its usage and its row inserted.
      assert.equal(setup.straightCount(), 9);
      assert.deepEqual(setup.throughKysely, []);
      const ids = tasks.map((task) => task.id);
      assert.deepEqual(setup.tasksIn(ids), ids);
      assert.deepEqual(setup.reservations(ids), ids);
    } finally {
      await setup.close();
    }
  });

  it('leaves creations under a limit to the transaction that checks it, which refuses past the limit as alone', async () => {
    const setup = await setUp('limited');
    try {
      const free = setup.newTask(setup.free);
      const underKey = setup.newTask(setup.free, { apiKeyId: setup.limitedKey });
      const pastKey = setup.newTask(setup.free, { apiKeyId: setup.limitedKey });
      const underAccount = setup.newTask(setup.capped);
      const atAccount = setup.newTask(setup.capped);
      const pastAccount = setup.newTask(setup.capped);
      const outcomes = await Promise.allSettled(
        [free, underKey, pastKey, underAccount, atAccount, pastAccount].map((task) => setup.createTask(task)),
      );
      assert.deepEqual(
        outcomes.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value.id : outcome.status)),
        [free.id, underKey.id, 'rejected', underAccount.id, atAccount.id, 'rejected'],
      );
      const [, , keyRefusal, , , accountRefusal] = outcomes;
      assert.ok(keyRefusal?.status === 'rejected' && keyRefusal.reason instanceof BudgetExceeded);
      assert.equal(keyRefusal.reason.refusal.holder, 'api_key');
      assert.ok(accountRefusal?.status === 'rejected' && accountRefusal.reason instanceof BudgetExceeded);
      assert.deepEqual(
        [accountRefusal.reason.refusal.holder, accountRefusal.reason.refusal.used],
        ['account', 10],
      );
      // Only the free one was written at once; the five limited ones went through Kysely's transaction.
      // (Each of those had its limits read at once first: 3 statements for the free one, 1 for each other.)
      assert.equal(setup.straightCount(), 3 + 5);
      assert.ok(setup.throughKysely.includes('begin'), setup.throughKysely.join('\n'));
      const created = [free, underKey, underAccount, atAccount].map((task) => task.id);
      const refused = [pastKey, pastAccount].map((task) => task.id);
      assert.deepEqual(setup.tasksIn([...created, ...refused]), created);
      assert.deepEqual(setup.reservations([...created, ...refused]), created);
    } finally {
      await setup.close();
    }
  });

  it('creates nothing at once when one creation fails; each is then tried in its savepoint and only it fails', async () => {
    const setup = await setUp('failing');
    try {
      const existing = await setup.createTask(setup.newTask(setup.free));
      const [first, duplicate, last] = [
        setup.newTask(setup.free),
        setup.newTask(setup.free, { id: existing.id }),
        setup.newTask(setup.free),
      ];
      const outcomes = await Promise.allSettled(
        [first, duplicate, last].map((task) => setup.createTask(task)),
      );
      assert.deepEqual(
        outcomes.map((outcome) => outcome.status),
        ['fulfilled', 'rejected', 'fulfilled'],
      );
      assert.match(String(outcomes[1]?.status === 'rejected' && outcomes[1].reason), /UNIQUE constraint/);
      assert.ok(setup.throughKysely.includes('savepoint grouped_write'), setup.throughKysely.join('\n'));
      const ids = [first.id, last.id];
      assert.deepEqual(setup.tasksIn(ids), ids);
      // The duplicate's reservation was rolled back with it.
      assert.deepEqual(setup.reservations([existing.id, ...ids]), [existing.id, ...ids]);
      assert.equal(setup.reservationCount(), 3);
    } finally {
      await setup.close();
    }
  });

  it('creates under new keys at once; a key seen before, in the group or earlier, goes to the transaction', async () => {
    const setup = await setUp('keys');
    try {
      const earlier = setup.newTask(setup.free);
      assert.equal((await setup.create(earlier, { key: 'k-earlier', requestHash: 'h1' })).outcome, 'created');
      const before = setup.straightCount();
      const first = setup.newTask(setup.free);
      const [a, again, other, fresh, repeat] = await Promise.all([
        setup.create(first, { key: 'k-group', requestHash: 'h1' }),
        setup.create(setup.newTask(setup.free), { key: 'k-group', requestHash: 'h1' }),
        setup.create(setup.newTask(setup.free), { key: 'k-group', requestHash: 'h2' }),
        setup.create(setup.newTask(setup.free), { key: 'k-fresh', requestHash: 'h1' }),
        setup.create(setup.newTask(setup.free), { key: 'k-earlier', requestHash: 'h1' }),
      ]);
      assert.deepEqual(
        [a, again, other, fresh, repeat].map((outcome) => outcome.outcome),
        ['created', 'replayed', 'conflict', 'created', 'replayed'],
      );
      assert.ok(again.outcome === 'replayed' && again.task.id === first.id);
      assert.ok(repeat.outcome === 'replayed' && repeat.task.id === earlier.id);
      // At once: limits and key for each, usage and row for the two new keys; the three keys seen before then
      // went through Kysely's transaction, which made nothing.
      assert.equal(setup.straightCount() - before, 5 * 2 + 2 * 2);
      assert.ok(setup.throughKysely.includes('begin'), setup.throughKysely.join('\n'));
      assert.equal(setup.reservationCount(), 3);
    } finally {
      await setup.close();
    }
  });
});

/**
 * The global queue cap counts pending tasks at most every QUEUE_RECOUNT_MS and adds the process's own admissions
 * (queue-room.ts). These tests hold it to its promise: one process never passes the cap, however many creations
 * arrive at once; with two processes on one PostgreSQL schema, the overshoot is at most what the other admitted
 * since the last count, and is seen once the count is renewed. The clock is moved by hand. The 503 itself is in
 * limits.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseGenerationRequest } from '../src/domain/generation-request.js';
import { newTaskId } from '../src/domain/identifiers.js';
import type { Store } from '../src/ports/store.js';
import { PgStore } from '../src/store/pg/pg-store.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { QUEUE_RECOUNT_MS, QUEUE_STALE_MS, QueueRoom } from '../src/tasks/queue-room.js';
import { freshSchemas, postgresSuite, TEST_DATABASE_URL } from './helpers/postgres.js';

const postgres = await postgresSuite();
const { model, params } = parseGenerationRequest({ model: 'videogen-2.0-text-to-video', prompt: 'a kite' });

function manualClock() {
  const clock = { at: 1_000_000, now: () => clock.at };
  return clock;
}

/** What a creation does: take a place, then store the task. */
async function create(room: QueueRoom, store: Store, accountId: string): Promise<boolean> {
  if (!(await room.admit())) return false;
  await store.createTask({ id: newTaskId(), accountId, environment: 'development', model: model.id, params });
  return true;
}

/** What `promise` settles with before the event loop's next turn, or 'waiting'. */
function settledAtOnce<T>(promise: Promise<T>): Promise<T | 'waiting'> {
  return Promise.race([promise, new Promise<'waiting'>((resolve) => setImmediate(() => resolve('waiting')))]);
}

describe('queue room in one process', () => {
  let store: SqliteStore;
  let accountId: string;
  before(async () => {
    store = new SqliteStore({ path: ':memory:' });
    await store.migrate();
    accountId = (await store.createAccount()).id;
  });
  after(() => store.close());

  it('admits exactly up to the cap, however many creations arrive at once, with one count', async () => {
    let counts = 0;
    const room = new QueueRoom({
      cap: 3,
      countPending: () => {
        counts += 1;
        return store.countPendingTasks();
      },
      now: manualClock().now,
    });
    const admitted = await Promise.all(Array.from({ length: 10 }, () => create(room, store, accountId)));
    assert.equal(admitted.filter(Boolean).length, 3);
    assert.equal(await store.countPendingTasks(), 3);
    assert.equal(counts, 1);
    assert.equal(await room.admit(), false);
  });

  it('sees tasks created or claimed elsewhere once its count is QUEUE_RECOUNT_MS old', async () => {
    const clock = manualClock();
    const room = new QueueRoom({ cap: 5, countPending: () => store.countPendingTasks(), now: clock.now });
    // 3 pending from the test before: room for 2.
    assert.equal(await create(room, store, accountId), true);
    // Another process claims two.
    for (const workerId of ['w1', 'w2']) {
      assert.ok(await store.claimTask({ workerId, leaseMs: 60_000, maxAttempts: 3 }));
    }
    assert.equal(await create(room, store, accountId), true);
    assert.equal(await create(room, store, accountId), false, 'the claims are not seen yet');
    clock.at += QUEUE_RECOUNT_MS;
    assert.equal(await store.countPendingTasks(), 3);
    assert.equal(await create(room, store, accountId), true);
    assert.equal(await create(room, store, accountId), true);
    assert.equal(await create(room, store, accountId), false);
    assert.equal(await store.countPendingTasks(), 5);
  });

  it('admits a creation the stale count leaves room for at once and renews the count behind it', async () => {
    const clock = manualClock();
    const counts: { resolve: (pending: number) => void }[] = [];
    const room = new QueueRoom({
      cap: 3,
      countPending: () => new Promise<number>((resolve) => counts.push({ resolve })),
      now: clock.now,
    });
    // The first count is waited for: there is none to go by.
    const first = room.admit();
    assert.equal(counts.length, 1);
    counts[0]?.resolve(0);
    assert.equal(await first, true);

    clock.at += QUEUE_RECOUNT_MS;
    // 0 + 1 admitted < 3: admitted without waiting for the new count, which is under way (settled before any
    // I/O or timer could run, so not by a count resolved meanwhile).
    assert.equal(await settledAtOnce(room.admit()), true);
    assert.equal(counts.length, 2);
    assert.equal(await settledAtOnce(room.admit()), true, 'one count at a time; still room by the old one');
    assert.equal(counts.length, 2);
    // By the old count the queue is full now (0 + 3): this one waits for the count under way.
    const full = room.admit();
    // Two were claimed meanwhile: the new count finds one pending, to which the two admitted since it began add.
    counts[1]?.resolve(1);
    assert.equal(await full, false, '1 + 2 admitted since the count began');
    clock.at += QUEUE_RECOUNT_MS;
    const renewed = room.admit();
    counts[2]?.resolve(0);
    assert.equal(await renewed, true, 'a count that leaves room: waited for, since the last one said full');
  });

  it('waits for a new count once the last one is QUEUE_STALE_MS old, and fails with it', async () => {
    const clock = manualClock();
    let failing = false;
    const room = new QueueRoom({
      cap: 10,
      countPending: () => (failing ? Promise.reject(new Error('store unreachable')) : Promise.resolve(0)),
      now: clock.now,
    });
    assert.equal(await room.admit(), true);
    failing = true;
    clock.at += QUEUE_RECOUNT_MS;
    assert.equal(await room.admit(), true, 'a failed renewal behind a creation does not fail it');
    clock.at += QUEUE_STALE_MS - QUEUE_RECOUNT_MS;
    await assert.rejects(room.admit(), /store unreachable/);
  });

  it('admits everything without a cap, without counting', async () => {
    const room = new QueueRoom({
      cap: 0,
      countPending: () => Promise.reject(new Error('counted')),
    });
    assert.equal(await room.admit(), true);
  });
});

describe('queue room across two API processes on one PostgreSQL schema', postgres, () => {
  const schema = freshSchemas()();
  let first: PgStore;
  let second: PgStore;
  let accountId: string;
  before(async () => {
    first = new PgStore({ connectionString: TEST_DATABASE_URL, schema });
    second = new PgStore({ connectionString: TEST_DATABASE_URL, schema });
    await first.migrate();
    await second.migrate();
    accountId = (await first.createAccount()).id;
  });
  after(async () => {
    await first?.close();
    await second?.close();
  });

  it('passes the cap by no more than the other process admitted since its count, then refuses', async () => {
    const clock = manualClock();
    const cap = 5;
    const a = new QueueRoom({ cap, countPending: () => first.countPendingTasks(), now: clock.now });
    const b = new QueueRoom({ cap, countPending: () => second.countPendingTasks(), now: clock.now });
    // b counts (0 pending) and creates one.
    assert.equal(await create(b, second, accountId), true);
    // a counts (1 pending) and fills the queue.
    let byA = 0;
    while (await create(a, first, accountId)) byA += 1;
    assert.equal(byA, 4);
    assert.equal(await second.countPendingTasks(), cap);

    // b's count is from before a's creations: it admits on its own view (0 + its own) until that is full.
    clock.at += QUEUE_RECOUNT_MS - 1;
    let overshoot = 0;
    while (await create(b, second, accountId)) overshoot += 1;
    assert.equal(overshoot, 4);
    assert.ok(overshoot <= byA, 'no more than the other process admitted since the count');
    assert.equal(await first.countPendingTasks(), cap + overshoot);

    // Once its count is renewed, b sees the queue as it is, and so does a.
    clock.at += 1;
    assert.equal(await b.admit(), false);
    assert.equal(await a.admit(), false);
  });
});

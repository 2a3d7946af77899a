/**
 * `max_concurrency` across a cluster: three worker pools (three processes' workers) share one store and an
 * engine capped at 2. At most two renders ever run at once; the third task waits pending, is not failed, and
 * starts when a slot frees. On SQLite and on PostgreSQL (where each pool claims through its own connections).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { parseGenerationRequest } from '../src/domain/generation-request.js';
import { newTaskId } from '../src/domain/identifiers.js';
import { ModelCatalogue } from '../src/domain/model-catalogue.js';
import { EngineRouter } from '../src/engines/engine-router.js';
import { createGuardedDispatcher } from '../src/outbound/guarded-dispatcher.js';
import type { Engine, RenderJob } from '../src/ports/engine.js';
import type { Store } from '../src/ports/store.js';
import { WorkerPool } from '../src/runner/worker-pool.js';
import { FileStorage } from '../src/storage/file-storage.js';
import { PgStore } from '../src/store/pg/pg-store.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { freshSchemas, postgresSuite, TEST_DATABASE_URL } from './helpers/postgres.js';

const MODEL = 'videogen-2.0-fast-text-to-video';

let dir: string;
const dispatcher = createGuardedDispatcher({ allowPrivateNetworks: true });
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-caps-'));
});
after(async () => {
  await dispatcher.close();
  await rm(dir, { recursive: true, force: true });
});

/** An engine whose renders wait until released, counting how many run at once. */
class GateEngine implements Engine {
  readonly name = 'gpu';
  running = 0;
  peak = 0;
  readonly started: string[] = [];
  readonly #releases: (() => void)[] = [];
  readonly #waiters = new Set<() => void>();

  async check(): Promise<void> {}

  async render(job: RenderJob): Promise<void> {
    this.running++;
    this.peak = Math.max(this.peak, this.running);
    this.started.push(job.taskId);
    this.#changed();
    try {
      await new Promise<void>((resolve) => this.#releases.push(resolve));
      await writeFile(job.outputPath, Buffer.alloc(1024, 1));
    } finally {
      this.running--;
    }
  }

  releaseOne(): void {
    this.#releases.shift()?.();
  }

  /** Resolves once `count` renders have started. */
  async startedAtLeast(count: number): Promise<void> {
    while (this.started.length < count) await new Promise<void>((resolve) => this.#waiters.add(resolve));
  }

  #changed(): void {
    for (const wake of [...this.#waiters]) {
      this.#waiters.delete(wake);
      wake();
    }
  }
}

/** Counts claims that came back empty, over every pool's store, and wakes whoever waits for a number of them. */
class EmptyClaims {
  #count = 0;
  readonly #waiters = new Set<() => void>();

  /** `store`, whose empty claims are counted here. */
  counting(store: Store): Store {
    const counted: Store = Object.create(store);
    counted.claimTask = async (options) => {
      const task = await store.claimTask(options);
      if (!task) {
        this.#count++;
        for (const wake of [...this.#waiters]) wake();
      }
      return task;
    };
    return counted;
  }

  /** Resolves after `count` more empty claims. */
  async next(count: number): Promise<void> {
    const target = this.#count + count;
    while (this.#count < target) {
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.#waiters.delete(wake);
          resolve();
        };
        this.#waiters.add(wake);
      });
    }
  }
}

/** `stores`: one per worker pool (the same store thrice on SQLite; three connection pools on PostgreSQL). */
async function capHolds(stores: readonly [Store, Store, Store]): Promise<void> {
  const [store] = stores;
  const engine = new GateEngine();
  const router = new EngineRouter(
    new Map([[MODEL, [[{ engine: 'gpu', weight: 1 }]]]]),
    new Map([['gpu', engine]]),
    {
      limits: new Map([['gpu', { maxConcurrency: 2 }]]),
    },
  );
  const scope = { accountId: (await store.createAccount()).id, environment: 'development' as const };
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const { model, params } = parseGenerationRequest({ model: MODEL, prompt: `task ${i}`, seed: 1 });
    const id = newTaskId();
    await store.createTask({ ...scope, id, model: model.id, params });
    ids.push(id);
  }
  const emptyClaims = new EmptyClaims();
  const storage = new FileStorage({ root: await mkdtemp(join(dir, 'files-')) });
  const pools = stores.map(
    (poolStore) =>
      new WorkerPool({
        store: emptyClaims.counting(poolStore),
        storage,
        engines: router,
        catalogue: ModelCatalogue.BUILT_IN,
        dispatcher,
        logger: pino({ level: 'silent' }),
        concurrency: 1,
        maxAttempts: 3,
        leaseMs: 60_000,
        taskTimeoutMs: 120_000,
        assetMaxBytes: 1024 * 1024,
        assetTimeoutMs: 5000,
        pollIntervalMs: 10,
      }),
  );
  try {
    for (const pool of pools) pool.start();
    await engine.startedAtLeast(2);
    // Every pool has since looked for work (at least one empty claim each) and found none it may take.
    await emptyClaims.next(3);
    assert.equal(engine.running, 2);
    const waiting = ids.filter((id) => !engine.started.includes(id));
    assert.equal(waiting.length, 1);
    assert.equal((await store.getTask(waiting[0] ?? ''))?.status, 'pending', 'the third task waits, pending');
    assert.deepEqual(Object.fromEntries((await store.engineStats()).inFlight), { gpu: 2 });

    engine.releaseOne();
    await engine.startedAtLeast(3);
    engine.releaseOne();
    engine.releaseOne();
    for (const id of ids) {
      for (;;) {
        const task = await store.getTask(id);
        if (task?.status === 'completed') break;
        assert.notEqual(task?.status, 'failed', JSON.stringify(task?.error));
        await emptyClaims.next(1);
      }
    }
    assert.equal(engine.peak, 2, 'never more than two renders at once');
  } finally {
    await Promise.all(pools.map((pool) => pool.stop(0)));
  }
}

// A broken cap shows as a wait that never ends (no pool is free to claim): the timeout turns it into a failure.
describe('max_concurrency with three workers', { timeout: 60_000 }, () => {
  it('holds on SQLite', async () => {
    const store = new SqliteStore({ path: join(dir, 'caps.db') });
    await store.migrate();
    try {
      await capHolds([store, store, store]);
    } finally {
      await store.close();
    }
  });

  describe('on PostgreSQL', async () => {
    const schema = freshSchemas();
    const options = await postgresSuite();
    it('holds', options, async () => {
      const name = schema();
      const open = () => new PgStore({ connectionString: TEST_DATABASE_URL, schema: name, poolSize: 2 });
      const stores = [open(), open(), open()] as const;
      try {
        for (const store of stores) await store.migrate();
        await capHolds(stores);
      } finally {
        await Promise.all(stores.map((store) => store.close()));
      }
    });
  });
});

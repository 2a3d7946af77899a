/**
 * The runner with stand-in engines: how a run ends decides the task's final state, time limits and lost
 * leases stop a render, and tasks whose worker vanished too often fail with `worker_lost`.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { TaskFailure } from '../src/domain/errors.js';
import { parseGenerationRequest } from '../src/domain/generation-request.js';
import { newTaskId } from '../src/domain/identifiers.js';
import { ModelCatalogue } from '../src/domain/model-catalogue.js';
import { resultKey } from '../src/domain/storage-keys.js';
import type { TaskRecord } from '../src/domain/task.js';
import { EngineRouter } from '../src/engines/engine-router.js';
import { createGuardedDispatcher } from '../src/outbound/guarded-dispatcher.js';
import type { Engine, RenderContext, RenderJob } from '../src/ports/engine.js';
import { RunStopped } from '../src/runner/run-stopped.js';
import { WorkerPool } from '../src/runner/worker-pool.js';
import { FileStorage } from '../src/storage/file-storage.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { until } from './helpers/until.js';

let dir: string;
let store: SqliteStore;
let storage: FileStorage;
let pool: WorkerPool | undefined;
const dispatcher = createGuardedDispatcher({ allowPrivateNetworks: true });
const SCOPE = { environment: 'development' as const, accountId: '' };

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-pool-'));
});
after(async () => {
  await dispatcher.close();
  await rm(dir, { recursive: true, force: true });
});
afterEach(async () => {
  await pool?.stop(0);
  pool = undefined;
  await store.close();
});

async function setUp(
  engine: Engine,
  options: { leaseMs?: number; taskTimeoutMs?: number; scratchDir?: string } = {},
): Promise<WorkerPool> {
  store = new SqliteStore({ path: ':memory:' });
  await store.migrate();
  SCOPE.accountId = (await store.createAccount()).id;
  storage = new FileStorage({ root: await mkdtemp(join(dir, 'files-')) });
  pool = new WorkerPool({
    store,
    storage,
    engines: EngineRouter.all(engine),
    catalogue: ModelCatalogue.BUILT_IN,
    dispatcher,
    logger: pino({ level: 'silent' }),
    concurrency: 1,
    maxAttempts: 3,
    leaseMs: options.leaseMs ?? 30_000,
    taskTimeoutMs: options.taskTimeoutMs ?? 60_000,
    assetMaxBytes: 1024 * 1024,
    assetTimeoutMs: 5000,
    pollIntervalMs: 50,
    ...(options.scratchDir && { scratchDir: options.scratchDir }),
  });
  return pool;
}

async function createTask(): Promise<string> {
  const { model, params } = parseGenerationRequest({
    model: 'videogen-2.0-fast-text-to-video',
    prompt: 'p',
    seed: 1,
  });
  const id = newTaskId();
  await store.createTask({ ...SCOPE, id, model: model.id, params });
  return id;
}

/** The task once `done` holds for it. */
async function taskUntil(taskId: string, done: (task: TaskRecord) => boolean): Promise<TaskRecord> {
  return until(
    async () => {
      const task = await store.getTask(taskId);
      assert.ok(task);
      return done(task) ? task : undefined;
    },
    `task ${taskId} reaching the state waited for`,
    { intervalMs: 20 },
  );
}

const final = (task: TaskRecord) => task.status === 'completed' || task.status === 'failed';

/** An engine that writes a small file after reporting some progress. */
const writingEngine: Engine = {
  name: 'writing',
  async check() {},
  async render(job: RenderJob, context: RenderContext) {
    context.onProgress(0.5);
    await writeFile(job.outputPath, Buffer.alloc(2048, 7));
    context.onProgress(1);
  },
};

/** An engine that renders until it is aborted, and records the abort's reason. */
function hangingEngine(aborted: unknown[]): Engine {
  return {
    name: 'hanging',
    async check() {},
    render(_job, context) {
      return new Promise((_resolve, reject) => {
        context.onProgress(0.2);
        context.signal.addEventListener('abort', () => {
          aborted.push(context.signal.reason);
          reject(context.signal.reason);
        });
      });
    },
  };
}

describe('worker pool', () => {
  it('completes a task: the result is stored under its key and progress is 100', async () => {
    (await setUp(writingEngine)).start();
    const id = await createTask();
    pool?.notify();
    const task = await taskUntil(id, final);
    assert.equal(task.status, 'completed');
    assert.equal(task.progress, 100);
    assert.equal(task.resultKey, resultKey(id));
    assert.equal((await storage.stat(resultKey(id)))?.size, 2048);
  });

  it("makes the next run's directory while it waits, and runs the task it claims there", async () => {
    const scratch = await mkdtemp(join(dir, 'scratch-'));
    const workDirs: string[] = [];
    const engine: Engine = {
      name: 'noting',
      async check() {},
      async render(job) {
        workDirs.push(job.workDir);
        await writeFile(job.outputPath, Buffer.alloc(16));
      },
    };
    (await setUp(engine, { scratchDir: scratch })).start();
    const ready = async () => {
      const [run, ...more] = await readdir(scratch);
      assert.equal(more.length, 0, 'one slot, one directory made ahead');
      if (run === undefined) return undefined;
      // The used one may be removed between the two reads.
      const inside = await readdir(join(scratch, run)).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return [] as string[];
        throw error;
      });
      return inside.includes('engine-1') ? run : undefined;
    };
    const first = await until(ready, 'the directory made ahead');
    const id = await createTask();
    pool?.notify();
    assert.equal((await taskUntil(id, final)).status, 'completed');
    assert.deepEqual(workDirs, [join(scratch, first, 'engine-1')]);
    // The used one is removed and the next made; at stop that one goes too.
    await until(async () => {
      const next = await ready();
      return next !== undefined && next !== first;
    }, 'the next directory made ahead, the used one removed');
    await pool?.stop(0);
    pool = undefined;
    assert.deepEqual(await readdir(scratch), []);
  });

  it('fails with the code and message of a TaskFailure', async () => {
    const engine: Engine = {
      name: 'refusing',
      async check() {},
      async render() {
        throw new TaskFailure('invalid_asset', 'image_urls[0]: not an image');
      },
    };
    (await setUp(engine)).start();
    const task = await taskUntil(await createTask(), final);
    assert.equal(task.status, 'failed');
    assert.deepEqual(task.error, { code: 'invalid_asset', message: 'image_urls[0]: not an image' });
  });

  it('fails with generation_failed, without internals, when an engine throws anything else', async () => {
    const engine: Engine = {
      name: 'crashing',
      async check() {},
      async render() {
        throw new Error('segfault at 0xdeadbeef in /opt/secret/path');
      },
    };
    (await setUp(engine)).start();
    const task = await taskUntil(await createTask(), final);
    assert.equal(task.error?.code, 'generation_failed');
    assert.doesNotMatch(task.error?.message ?? '', /deadbeef|secret/);
  });

  it('fails with generation_failed when an engine reports success but writes nothing', async () => {
    (await setUp({ name: 'idle', async check() {}, async render() {} })).start();
    const task = await taskUntil(await createTask(), final);
    assert.equal(task.error?.code, 'generation_failed');
  });

  it('stops a render past the time limit and fails the task with timeout', async () => {
    const aborted: unknown[] = [];
    // 2 s: the limit runs from the claim, and the engine must have been started before it passes, loaded or not.
    (await setUp(hangingEngine(aborted), { taskTimeoutMs: 2000 })).start();
    const task = await taskUntil(await createTask(), final);
    assert.equal(task.status, 'failed');
    assert.equal(task.error?.code, 'timeout');
    assert.equal(aborted.length, 1);
  });

  it('stops a render whose lease another worker took, and leaves the task to that worker', async () => {
    const aborted: unknown[] = [];
    (await setUp(hangingEngine(aborted), { leaseMs: 300, taskTimeoutMs: 600_000 })).start();
    const id = await createTask();
    await taskUntil(id, (t) => t.status === 'processing');
    // Another worker claims the task as if the lease had run out; the next heartbeat finds it gone.
    await store.releaseTask({ taskId: id, attempt: 1, workerId: pool!.workerId });
    const stolen = await store.claimTask({ workerId: 'other-worker', leaseMs: 60_000, maxAttempts: 3 });
    assert.equal(stolen?.id, id);
    await until(() => aborted.length > 0, 'the first render stopping');
    assert.equal(aborted.length, 1, 'the first render was stopped');
    const [stopped] = aborted;
    assert.ok(stopped instanceof RunStopped && stopped.reason === 'lease_lost', String(stopped));
    const task = await store.getTask(id);
    assert.equal(task?.status, 'processing');
    assert.equal(task?.leaseOwner, 'other-worker', 'the stopped run wrote nothing over the new claim');
  });

  it('stops a render once its lease would have run out while the store was unreachable', async () => {
    const aborted: unknown[] = [];
    // Nothing but the lost lease stops it early: the time limit is ten minutes off.
    (await setUp(hangingEngine(aborted), { leaseMs: 400, taskTimeoutMs: 600_000 })).start();
    const id = await createTask();
    await taskUntil(id, (t) => t.status === 'processing');
    const cutOffAt = Date.now();
    store.renewLeases = async () => {
      throw new Error('connect ECONNREFUSED 10.0.0.5:5432');
    };
    await until(() => aborted.length > 0, 'the render stopping');
    assert.equal(aborted.length, 1, 'the render was stopped');
    const [stopped] = aborted;
    assert.ok(stopped instanceof RunStopped && stopped.reason === 'lease_lost', String(stopped));
    // Far from any machine's speed, and far from the time limit.
    assert.ok(Date.now() - cutOffAt < 60_000, 'stopped for the lease, long before the time limit');
    assert.equal((await store.getTask(id))?.status, 'processing', 'left for the next claim after the lease');
  });

  it('fails a task with worker_lost once its last allowed lease expired', async () => {
    await setUp(writingEngine, { leaseMs: 200 });
    const id = await createTask();
    for (let attempt = 1; attempt <= 3; attempt++) {
      const claimed = await store.claimTask({ workerId: `dead-${attempt}`, leaseMs: 1, maxAttempts: 3 });
      assert.equal(claimed?.attempts, attempt);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    pool?.start();
    const task = await taskUntil(id, final);
    assert.equal(task.status, 'failed');
    assert.equal(task.error?.code, 'worker_lost');
  });

  it('on stop(0), aborts running renders and hands their tasks back to the queue', async () => {
    const aborted: unknown[] = [];
    (await setUp(hangingEngine(aborted))).start();
    const id = await createTask();
    pool?.notify();
    await taskUntil(id, (t) => t.status === 'processing' && t.progress > 0);
    await pool?.stop(0);
    pool = undefined;
    const task = await store.getTask(id);
    assert.equal(task?.status, 'pending');
    assert.equal(task?.attempts, 0);
    assert.equal(aborted.length, 1);
  });
});

describe('remote jobs and the render slots', () => {
  /**
   * A remote engine: submits (accepting with a handle), waits for its upstream to finish the job (a gate the
   * test opens), then takes the machine again to write the result; records whether it held the machine then.
   */
  function remoteEngine() {
    const gates = new Map<string, () => void>();
    const accepted: string[] = [];
    let writing = 0;
    let mostWritingAtOnce = 0;
    const engine: Engine = {
      name: 'remote',
      async check() {},
      async render(job, context) {
        await context.onAccepted?.({ id: `job-${job.taskId}` });
        accepted.push(job.taskId);
        await new Promise<void>((resolve, reject) => {
          gates.set(job.taskId, resolve);
          context.signal.addEventListener('abort', () => reject(context.signal.reason), { once: true });
        });
        await context.upstreamDone?.();
        writing++;
        mostWritingAtOnce = Math.max(mostWritingAtOnce, writing);
        await writeFile(job.outputPath, Buffer.alloc(2048, 7));
        writing--;
      },
    };
    return {
      engine,
      accepted,
      gates,
      get mostWritingAtOnce() {
        return mostWritingAtOnce;
      },
    };
  }

  it('follows more remote jobs than it has slots: a slot is let go while the upstream works', async () => {
    const remote = remoteEngine();
    const started = await setUp(remote.engine);
    const ids = await Promise.all(Array.from({ length: 5 }, () => createTask()));
    started.start();
    // One slot, and all five jobs accepted upstream at once.
    await until(() => remote.accepted.length === 5, 'every job accepted while none has finished');
    for (const id of ids) {
      const task = await store.getTask(id);
      assert.equal(task?.status, 'processing');
      assert.equal(task?.upstreamJob?.id, `job-${id}`);
    }
    for (const open of remote.gates.values()) open();
    for (const id of ids) assert.equal((await taskUntil(id, final)).status, 'completed');
    assert.equal(remote.mostWritingAtOnce, 1, 'results are fetched and written one slot at a time');
  });

  it('hands every such job back at shutdown, for the next process to resume', async () => {
    const remote = remoteEngine();
    const started = await setUp(remote.engine);
    const ids = await Promise.all(Array.from({ length: 3 }, () => createTask()));
    started.start();
    await until(() => remote.accepted.length === 3, 'every job accepted');
    await started.stop(0);
    pool = undefined;
    for (const id of ids) {
      const task = await store.getTask(id);
      assert.equal(task?.status, 'pending', 'handed back');
      assert.equal(task?.attempts, 0, 'without counting the attempt');
      assert.equal(task?.upstreamJob?.id, `job-${id}`, 'with its job');
    }
  });
});

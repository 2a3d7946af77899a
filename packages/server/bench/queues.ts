/**
 * Task dispatch: how soon a created task reaches a worker (creation → claim, p50/p99) and how many tasks per
 * second flow through, with an instant engine, for videogen on SQLite and on PostgreSQL, beside
 * graphile-worker (PostgreSQL) and BullMQ (Redis) running no-op jobs in the same run on the same machine.
 *
 * Every system gets the same work: 4 concurrent handlers; a latency phase of LATENCY_JOBS jobs created one
 * every 20 ms (an idle queue, so it measures how a worker learns of new work); a throughput phase of
 * THROUGHPUT_JOBS jobs created at once. Dispatch ends when the claimed task reaches a worker slot (videogen)
 * or the handler starts (the others). videogen's throughput includes its whole run path (claim with a lease,
 * scratch directory, storing the output, completion in the store), not just the queue.
 *
 * Needs PostgreSQL (VIDEOGEN_BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test) and Redis
 * (VIDEOGEN_BENCH_REDIS_URL, default redis://127.0.0.1:6379); a system whose server is missing is reported
 * as skipped.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue, Worker } from 'bullmq';
import { Logger as GraphileLogger, makeWorkerUtils, run as runGraphileWorker } from 'graphile-worker';
import { Redis } from 'ioredis';
import pg from 'pg';
import { pino } from 'pino';
import { EngineRouter } from '../src/engines/engine-router.js';
import { createGuardedDispatcher } from '../src/outbound/guarded-dispatcher.js';
import type { Engine, RenderJob } from '../src/ports/engine.js';
import type { Store } from '../src/ports/store.js';
import { WorkerPool } from '../src/runner/worker-pool.js';
import { FileStorage } from '../src/storage/file-storage.js';
import { PgStore } from '../src/store/pg-store.js';
import { SqliteStore } from '../src/store/sqlite-store.js';
import { ResultLinks } from '../src/tasks/result-links.js';
import { TaskService } from '../src/tasks/task-service.js';

const CONCURRENCY = 4;
const LATENCY_JOBS = Number(process.env.LATENCY_JOBS ?? 200);
const THROUGHPUT_JOBS = Number(process.env.THROUGHPUT_JOBS ?? 1000);
const DATABASE_URL = process.env.VIDEOGEN_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = new URL(process.env.VIDEOGEN_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379');

/** A queue under test: `enqueue` creates one job; `started` is called by its handler with the job's id. */
interface System {
  readonly name: string;
  enqueue(id: number): Promise<void>;
  close(): Promise<void>;
}

interface Result {
  readonly name: string;
  readonly p50: number;
  readonly p99: number;
  readonly perSecond: number;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

/** Runs both phases against a system built by `open(started)`. */
async function measure(
  name: string,
  open: (started: (id: number) => void) => Promise<System>,
): Promise<Result> {
  const createdAt = new Map<number, number>();
  const latencies: number[] = [];
  let handled = 0;
  let allHandled: (() => void) | undefined;
  let expected = 0;
  const system = await open((id) => {
    const at = createdAt.get(id);
    if (at !== undefined && id < LATENCY_JOBS) latencies.push(performance.now() - at);
    handled++;
    if (handled === expected) allHandled?.();
  });
  try {
    const done = (count: number) =>
      new Promise<void>((resolve, reject) => {
        expected = count;
        allHandled = resolve;
        if (handled >= count) resolve();
        setTimeout(
          () => reject(new Error(`${name}: ${handled}/${count} jobs ran in 120 s`)),
          120_000,
        ).unref();
      });

    const latencyDone = done(LATENCY_JOBS);
    for (let id = 0; id < LATENCY_JOBS; id++) {
      createdAt.set(id, performance.now());
      await system.enqueue(id);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await latencyDone;

    const throughputDone = done(LATENCY_JOBS + THROUGHPUT_JOBS);
    const started = performance.now();
    const ids = Array.from({ length: THROUGHPUT_JOBS }, (_, i) => LATENCY_JOBS + i);
    for (let i = 0; i < ids.length; i += 50)
      await Promise.all(ids.slice(i, i + 50).map((id) => system.enqueue(id)));
    await throughputDone;
    const seconds = (performance.now() - started) / 1000;

    latencies.sort((a, b) => a - b);
    return {
      name,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      perSecond: THROUGHPUT_JOBS / seconds,
    };
  } finally {
    await system.close();
  }
}

/** Renders nothing: writes a few bytes where the video would go. */
class InstantEngine implements Engine {
  readonly name = 'instant';
  async check(): Promise<void> {}
  async render(job: RenderJob): Promise<void> {
    await writeFile(job.outputPath, 'not a video');
  }
}

/** The store, reporting each claim as it reaches a worker slot: dispatch ends there, as a handler's start does. */
function reportingClaims(store: Store, claimed: (taskId: string) => void): Store {
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property !== 'claimTask') {
        const value: unknown = Reflect.get(target, property, receiver);
        // Bound to the store itself: its methods read private fields, which a proxy does not have.
        return typeof value === 'function' ? value.bind(target) : value;
      }
      return async (...args: Parameters<Store['claimTask']>) => {
        const task = await target.claimTask(...args);
        if (task) claimed(task.id);
        return task;
      };
    },
  });
}

async function videogen(name: string, openStore: () => Promise<Store>, cleanUp?: () => Promise<void>) {
  return measure(name, async (started) => {
    const dir = await mkdtemp(join(tmpdir(), 'videogen-bench-queue-'));
    const ids = new Map<string, number>();
    const store = reportingClaims(await openStore(), (taskId) => started(ids.get(taskId) ?? -1));
    const dispatcher = createGuardedDispatcher({ allowPrivateNetworks: true });
    const release = async () => {
      await dispatcher.close();
      await store.close();
      await cleanUp?.();
      await rm(dir, { recursive: true, force: true });
    };
    let scope: { accountId: string; environment: 'development' };
    try {
      await store.migrate();
      scope = { accountId: (await store.createAccount()).id, environment: 'development' };
    } catch (error) {
      await release().catch(() => undefined);
      throw error;
    }
    const pool = new WorkerPool({
      store,
      storage: new FileStorage({ root: join(dir, 'files') }),
      engines: EngineRouter.all(new InstantEngine()),
      dispatcher,
      logger: pino({ level: 'silent' }),
      concurrency: CONCURRENCY,
      maxAttempts: 3,
      leaseMs: 30_000,
      taskTimeoutMs: 60_000,
      assetMaxBytes: 1024,
      assetTimeoutMs: 1000,
    });
    const links = new ResultLinks({ publicUrl: () => 'http://localhost', secret: 's', ttlSeconds: 3600 });
    const tasks = new TaskService({ store, resultUrl: links.resultUrl, onCreated: () => pool.notify() });
    pool.start();
    return {
      name,
      async enqueue(id) {
        const task = await tasks.create(scope, {
          model: 'videogen-2.0-fast-text-to-video',
          prompt: `job ${id}`,
        });
        ids.set(task.id, id);
      },
      async close() {
        await pool.stop(10_000);
        await release();
      },
    };
  });
}

async function graphileWorker() {
  const schema = `vg_bench_graphile_${process.pid}`;
  const logger = new GraphileLogger(() => () => {});
  const dropSchema = async () => {
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    try {
      await client.query(`drop schema if exists ${schema} cascade`);
    } finally {
      await client.end();
    }
  };
  return measure('graphile-worker (PostgreSQL)', async (started) => {
    const runner = await runGraphileWorker({
      connectionString: DATABASE_URL,
      schema,
      concurrency: CONCURRENCY,
      noHandleSignals: true,
      pollInterval: 2000,
      logger,
      taskList: {
        noop: async (payload) => {
          started((payload as { id: number }).id);
        },
      },
    });
    let utils: Awaited<ReturnType<typeof makeWorkerUtils>>;
    try {
      utils = await makeWorkerUtils({ connectionString: DATABASE_URL, schema, logger });
    } catch (error) {
      await runner.stop().catch(() => undefined);
      await dropSchema().catch(() => undefined);
      throw error;
    }
    return {
      name: 'graphile-worker',
      async enqueue(id) {
        await utils.addJob('noop', { id });
      },
      async close() {
        await runner.stop();
        await utils.release();
        await dropSchema();
      },
    };
  });
}

async function bullmq() {
  const queueName = `vg-bench-${process.pid}`;
  return measure('BullMQ (Redis)', async (started) => {
    // Under native ESM BullMQ wants constructed clients; a worker needs its own (it blocks on it). BullMQ
    // leaves a client it was given open when it closes, so these are closed here, or the process never exits.
    const clients: Redis[] = [];
    const redis = async () => {
      // lazyConnect, so that a missing server fails this connect() instead of queueing commands forever.
      const client = new Redis(REDIS_URL.href, { maxRetriesPerRequest: null, lazyConnect: true });
      let lastError: Error | undefined;
      client.on('error', (error: Error) => {
        lastError = error;
      });
      clients.push(client);
      await client.connect().catch((error: unknown) => {
        throw lastError ?? error;
      });
      return client;
    };
    const disconnect = async () => {
      await Promise.all(
        clients.map((client) => (client.status === 'ready' ? client.quit() : client.disconnect())),
      );
    };
    let queue: Queue | undefined;
    let worker: Worker | undefined;
    const closeAll = async () => {
      await worker?.close();
      await queue?.obliterate({ force: true });
      await queue?.close();
    };
    try {
      queue = new Queue(queueName, { connection: await redis() });
      await queue.obliterate({ force: true });
      worker = new Worker(
        queueName,
        async (job) => {
          started((job.data as { id: number }).id);
        },
        { connection: await redis(), concurrency: CONCURRENCY },
      );
      await worker.waitUntilReady();
    } catch (error) {
      await closeAll().catch(() => undefined);
      await disconnect();
      throw error;
    }
    const opened = queue;
    return {
      name: 'BullMQ',
      async enqueue(id) {
        await opened.add('noop', { id }, { removeOnComplete: true, removeOnFail: true });
      },
      async close() {
        try {
          await closeAll();
        } finally {
          await disconnect();
        }
      },
    };
  });
}

async function attempt(run: () => Promise<Result>, name: string): Promise<Result | undefined> {
  try {
    return await run();
  } catch (error) {
    console.error(`${name}: skipped (${error instanceof Error ? error.message : String(error)})`);
    return undefined;
  }
}

async function main(): Promise<void> {
  const sqliteDir = await mkdtemp(join(tmpdir(), 'videogen-bench-sqlite-'));
  const results = [
    await attempt(
      () => videogen('videogen (SQLite)', async () => new SqliteStore({ path: join(sqliteDir, 'bench.db') })),
      'videogen (SQLite)',
    ),
    await attempt(() => {
      const schema = `vg_bench_${process.pid}`;
      return videogen(
        'videogen (PostgreSQL)',
        async () => new PgStore({ connectionString: DATABASE_URL, schema }),
        async () => {
          const client = new pg.Client({ connectionString: DATABASE_URL });
          await client.connect();
          await client.query(`drop schema if exists ${schema} cascade`);
          await client.end();
        },
      );
    }, 'videogen (PostgreSQL)'),
    await attempt(graphileWorker, 'graphile-worker'),
    await attempt(bullmq, 'BullMQ'),
  ].filter((r): r is Result => r !== undefined);
  await rm(sqliteDir, { recursive: true, force: true });
  if (results.length === 0) {
    console.error('No system ran.');
    process.exitCode = 1;
    return;
  }

  const best = (pick: (r: Result) => number, lowest: boolean) =>
    results.reduce((a, b) => ((lowest ? pick(a) <= pick(b) : pick(a) >= pick(b)) ? a : b));
  console.log(
    `\n${CONCURRENCY} handlers; latency over ${LATENCY_JOBS} jobs one every 20 ms; throughput over ${THROUGHPUT_JOBS} jobs at once\n`,
  );
  console.log('| system | creation → start p50 | p99 | throughput |');
  console.log('|---|---|---|---|');
  for (const r of results) {
    console.log(
      `| ${r.name} | ${r.p50.toFixed(1)} ms | ${r.p99.toFixed(1)} ms | ${r.perSecond.toFixed(0)} jobs/s |`,
    );
  }
  const fastest = best((r) => r.p50, true);
  for (const r of results) {
    console.log(
      `${r.name}: p50 ${(r.p50 / fastest.p50).toFixed(2)}x of ${fastest.name}, throughput ${(r.perSecond / best((x) => x.perSecond, false).perSecond).toFixed(2)}x of the best`,
    );
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});

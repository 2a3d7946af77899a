/**
 * Task dispatch: how soon a created task is processing on a worker (creation → processing, p50/p99) and how
 * many tasks per second flow through, for videogen on SQLite and on PostgreSQL, beside graphile-worker
 * (PostgreSQL) and BullMQ (Redis) running no-op jobs in the same run on the same machine.
 *
 * videogen runs whole, as `serve` does (API, worker pool and callbacks in one process), with an instant engine:
 * a job is an HTTP `POST /v1/videos/generations` (API key, validation, the queue cap, the insert) sent with
 * undici's `request` on kept-alive connections, and it has
 * started when the engine is handed the task, claimed and `processing` in the store. The others' jobs are
 * `addJob`/`add` calls, started when the handler runs; neither has an HTTP hop, so videogen carries one more.
 *
 * Every system gets the same work: 4 concurrent handlers; a latency phase of LATENCY_JOBS jobs, the systems
 * taking turns, a job created 20 ms after the previous one started (an idle queue, so it measures how a
 * worker learns of new work, and load from outside falls on every system alike); a throughput phase of
 * THROUGHPUT_JOBS jobs created at once, one system after the other. videogen's throughput includes its whole run path (claim with a lease,
 * scratch directory, storing the output, completion in the store), not just the queue.
 *
 * Needs PostgreSQL (VIDEOGEN_BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test) and Redis
 * (VIDEOGEN_BENCH_REDIS_URL, default redis://127.0.0.1:6379); a system whose server is missing is reported
 * as skipped. `BENCH_SYSTEMS` (default `sqlite,postgres,graphile-worker,bullmq`) picks which run.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue, Worker } from 'bullmq';
import { Logger as GraphileLogger, makeWorkerUtils, run as runGraphileWorker } from 'graphile-worker';
import { Redis } from 'ioredis';
import pg from 'pg';
import { pino } from 'pino';
import { Agent, request } from 'undici';
import { createApiKey } from 'videogen/dist/src/accounts/api-keys.js';
import { loadConfig } from 'videogen/dist/src/config.js';
import type { Engine, RenderJob } from 'videogen/dist/src/ports/engine.js';
import { type Service, startService } from 'videogen/dist/src/service.js';
import { MIGRATION_LOCK_KEY } from 'videogen/dist/src/store/pg/pg-database.js';

const CONCURRENCY = 4;
const LATENCY_JOBS = Number(process.env.LATENCY_JOBS ?? 200);
const THROUGHPUT_JOBS = Number(process.env.THROUGHPUT_JOBS ?? 1000);
const DATABASE_URL = process.env.VIDEOGEN_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = new URL(process.env.VIDEOGEN_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379');
const SYSTEMS = new Set((process.env.BENCH_SYSTEMS ?? 'sqlite,postgres,graphile-worker,bullmq').split(','));

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

/** Counts a system's started jobs, their latencies, and lets the run wait for a count. */
class Tracker {
  readonly createdAt = new Map<number, number>();
  readonly latencies: number[] = [];
  #handled = 0;
  #waiting: { readonly count: number; resolve(): void } | undefined;

  readonly started = (id: number): void => {
    const at = this.createdAt.get(id);
    if (at !== undefined && id < LATENCY_JOBS) this.latencies.push(performance.now() - at);
    this.#handled++;
    if (this.#waiting && this.#handled >= this.#waiting.count) this.#waiting.resolve();
  };

  /** Resolves once `count` jobs have started in all. */
  until(count: number, name: string): Promise<void> {
    if (this.#handled >= count) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${name}: ${this.#handled}/${count} jobs ran in 120 s`)),
        120_000,
      );
      this.#waiting = {
        count,
        resolve: () => {
          clearTimeout(timer);
          this.#waiting = undefined;
          resolve();
        },
      };
    });
  }
}

interface Opened {
  readonly name: string;
  readonly system: System;
  readonly tracker: Tracker;
}

/**
 * The latency phase, every system open at once and taking turns job by job (one job, wait for it to start,
 * 20 ms, the next system's job), so that load from outside the benchmark falls on all of them alike; then
 * the throughput phase, one system after the other. A system that fails (a job not started in 120 s, its
 * connection killed from outside) is reported and left out; the others go on.
 */
async function measureAll(systems: readonly Opened[]): Promise<Result[]> {
  const failed = new Set<string>();
  const fail = (name: string, error: unknown) => {
    failed.add(name);
    console.error(`${name}: left out (${error instanceof Error ? error.message : String(error)})`);
  };
  for (let id = 0; id < LATENCY_JOBS; id++) {
    for (const { name, system, tracker } of systems) {
      if (failed.has(name)) continue;
      try {
        tracker.createdAt.set(id, performance.now());
        await system.enqueue(id);
        await tracker.until(id + 1, name);
      } catch (error) {
        fail(name, error);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  const results: Result[] = [];
  for (const { name, system, tracker } of systems) {
    if (failed.has(name)) continue;
    try {
      const started = performance.now();
      const ids = Array.from({ length: THROUGHPUT_JOBS }, (_, i) => LATENCY_JOBS + i);
      const done = tracker.until(LATENCY_JOBS + THROUGHPUT_JOBS, name);
      for (let i = 0; i < ids.length; i += 50)
        await Promise.all(ids.slice(i, i + 50).map((id) => system.enqueue(id)));
      await done;
      const seconds = (performance.now() - started) / 1000;
      const latencies = [...tracker.latencies].sort((x, y) => x - y);
      results.push({
        name,
        p50: percentile(latencies, 50),
        p99: percentile(latencies, 99),
        perSecond: THROUGHPUT_JOBS / seconds,
      });
    } catch (error) {
      fail(name, error);
    }
  }
  return results;
}

/** Renders nothing: reports the job's start, then writes a few bytes where the video would go. */
class InstantEngine implements Engine {
  readonly name = 'instant';
  readonly #started: (prompt: string) => void;
  constructor(started: (prompt: string) => void) {
    this.#started = started;
  }
  async check(): Promise<void> {}
  async render(job: RenderJob): Promise<void> {
    this.#started(job.params.prompt);
    await writeFile(job.outputPath, 'not a video');
  }
}

/**
 * The whole service as `serve` runs it (role `all`: API, worker pool and callbacks in one process), with every
 * model on an instant engine: a job is a `POST /v1/videos/generations` with an API key, and it has started
 * when the engine is handed the claimed task, by then `processing` in the store.
 */
async function videogen(
  name: string,
  started: (id: number) => void,
  env: Record<string, string>,
  cleanUp?: () => Promise<void>,
): Promise<System> {
  const dataDir = await mkdtemp(join(tmpdir(), 'videogen-bench-queue-'));
  const release = async () => {
    await cleanUp?.();
    await rm(dataDir, { recursive: true, force: true });
  };
  let service: Service;
  try {
    service = await startService(
      loadConfig({
        VIDEOGEN_DATA_DIR: dataDir,
        VIDEOGEN_HOST: '127.0.0.1',
        VIDEOGEN_PORT: '0',
        VIDEOGEN_WORKER_CONCURRENCY: String(CONCURRENCY),
        // On, as by default, but far above what the run asks.
        VIDEOGEN_RATE_LIMIT_PER_MINUTE: '1000000000',
        ...env,
      }),
      pino({ level: 'silent' }),
      { engine: new InstantEngine((prompt) => started(Number(prompt.slice('job '.length)))) },
    );
  } catch (error) {
    await release().catch(() => undefined);
    throw error;
  }
  const { key } = await createApiKey(service.store, { name: 'bench', environment: 'development' });
  const url = `${service.publicUrl}/v1/videos/generations`;
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  // undici's own `request` over kept-alive connections: the leanest Node.js client, so that the figure is the
  // service's (the others' clients are a connection each, kept open). `fetch` took about 1 ms more per job
  // on this machine, most of a quiet run's difference from graphile-worker.
  const agent = new Agent();
  return {
    name,
    async enqueue(id) {
      const response = await request(url, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: 'videogen-2.0-fast-text-to-video', prompt: `job ${id}` }),
        dispatcher: agent,
      });
      const text = await response.body.text();
      if (response.statusCode !== 200) throw new Error(`creation: ${response.statusCode} ${text}`);
    },
    async close() {
      await agent.close();
      await service.close();
      await release();
    },
  };
}

/**
 * Drops a schema holding the store's migration lock (pg-database.ts): a videogen migrator running meanwhile on
 * the same database (the tests, which run beside this benchmark) introspects every schema's tables and fails if
 * one vanishes under it.
 */
async function dropSchemaLocked(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    await client.query('select pg_advisory_lock($1::bigint)', [MIGRATION_LOCK_KEY]);
    await client.query(`drop schema if exists ${schema} cascade`);
  } finally {
    await client.end();
  }
}

async function graphileWorker(started: (id: number) => void): Promise<System> {
  const schema = `vg_bench_graphile_${process.pid}`;
  const logger = new GraphileLogger(() => () => {});
  const dropSchema = () => dropSchemaLocked(schema);
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
    name: 'graphile-worker (PostgreSQL)',
    async enqueue(id) {
      await utils.addJob('noop', { id });
    },
    async close() {
      await runner.stop();
      await utils.release();
      await dropSchema();
    },
  };
}

async function bullmq(started: (id: number) => void): Promise<System> {
  const queueName = `vg-bench-${process.pid}`;
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
    name: 'BullMQ (Redis)',
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
}

/** Opens a system, or reports it skipped (its server missing, or left out by BENCH_SYSTEMS). */
async function attempt(
  key: string,
  open: (started: (id: number) => void) => Promise<System>,
): Promise<Opened | undefined> {
  if (!SYSTEMS.has(key)) return undefined;
  const tracker = new Tracker();
  try {
    const system = await open(tracker.started);
    return { name: system.name, system, tracker };
  } catch (error) {
    console.error(`${key}: skipped (${error instanceof Error ? error.message : String(error)})`);
    return undefined;
  }
}

async function main(): Promise<void> {
  const pgSchema = `vg_bench_${process.pid}`;
  const opened = [
    await attempt('sqlite', (started) => videogen('videogen (SQLite)', started, {})),
    await attempt('postgres', (started) =>
      videogen(
        'videogen (PostgreSQL)',
        started,
        { VIDEOGEN_DATABASE_URL: DATABASE_URL, VIDEOGEN_DATABASE_SCHEMA: pgSchema },
        () => dropSchemaLocked(pgSchema),
      ),
    ),
    await attempt('graphile-worker', graphileWorker),
    await attempt('bullmq', bullmq),
  ].filter((o): o is Opened => o !== undefined);
  let results: Result[];
  try {
    results = await measureAll(opened);
  } finally {
    for (const { name, system } of opened) {
      await system.close().catch((error: unknown) => console.error(`${name}: closing failed`, error));
    }
  }
  if (results.length === 0) {
    console.error('No system ran.');
    process.exitCode = 1;
    return;
  }

  const best = (pick: (r: Result) => number, lowest: boolean) =>
    results.reduce((a, b) => ((lowest ? pick(a) <= pick(b) : pick(a) >= pick(b)) ? a : b));
  console.log(
    `\n${CONCURRENCY} handlers; latency over ${LATENCY_JOBS} jobs a system, taking turns, 20 ms apart; throughput over ${THROUGHPUT_JOBS} jobs at once\n`,
  );
  console.log('| system | creation → processing p50 | p99 | throughput |');
  console.log('|---|---|---|---|');
  for (const r of results) {
    console.log(
      `| ${r.name} | ${r.p50.toFixed(1)} ms | ${r.p99.toFixed(1)} ms | ${r.perSecond.toFixed(0)} jobs/s |`,
    );
  }
  const fastest = best((r) => r.p50, true);
  const graphile = results.find((r) => r.name.startsWith('graphile-worker'));
  for (const r of results) {
    const againstGraphile = graphile ? `, ${(r.p50 / graphile.p50).toFixed(2)}x of graphile-worker's` : '';
    console.log(
      `${r.name}: p50 ${(r.p50 / fastest.p50).toFixed(2)}x of ${fastest.name}${againstGraphile}, throughput ${(r.perSecond / best((x) => x.perSecond, false).perSecond).toFixed(2)}x of the best`,
    );
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});

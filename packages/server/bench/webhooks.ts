/**
 * Callback benchmarks, each printed as a ratio against a baseline measured in the same run, against one fast
 * receiver on 127.0.0.1 (node:http, answers 204 at once):
 * 1. latency: from `completeTask` committing (the `task.completed` delivery queued in the same transaction)
 *    to the receiver having the POST, p50 and p99, with a running `WebhookDispatcher` woken by `notify()`
 *    as the worker pool does; baseline: the same receiver's latency for a plain undici POST of the same body.
 * 2. throughput: deliveries per second from queued to recorded as succeeded; baseline: plain undici POSTs of
 *    the same requests, as many at once as the dispatcher may send to one receiver.
 * The store is a real `SqliteStore` in a temporary directory and tasks are created, claimed and completed
 * through it directly (no rendering). Every delivery must have arrived exactly once with a valid signature
 * (checked with the `standardwebhooks` library) and be logged as succeeded after one attempt, or the run fails.
 * `BENCH_WEBHOOK_TASKS` (default 200) sets the latency samples, `BENCH_WEBHOOK_DELIVERIES` (default 2000) the
 * throughput run, drained in `BENCH_WEBHOOK_ROUNDS` (default 4) rounds that alternate with their baseline;
 * `VIDEOGEN_WEBHOOK_CONCURRENCY` and `VIDEOGEN_WEBHOOK_HOST_CONCURRENCY` apply as in the service;
 * `BENCH_PROFILE_DIR` also writes a CPU profile of one more drain (`webhooks-drain.cpuprofile`). Run alone with `node packages/server/dist/bench/webhooks.js`; `npm run bench` runs it after run.ts.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { Webhook } from 'standardwebhooks';
import { Agent, request } from 'undici';
import { type Config, loadConfig } from '../src/config.js';
import type { DeliveryRecord } from '../src/domain/delivery.js';
import { parseGenerationRequest } from '../src/domain/generation-request.js';
import { newTaskId } from '../src/domain/identifiers.js';
import { resultKey } from '../src/domain/storage-keys.js';
import type { TaskScope } from '../src/domain/task.js';
import { createGuardedDispatcher } from '../src/outbound/guarded-dispatcher.js';
import type { DeliveryClaim, DeliveryClaimOptions, FinishedDeliveryAttempt } from '../src/ports/store.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { ResultLinks } from '../src/tasks/result-links.js';
import { WebhookDispatcher } from '../src/webhooks/webhook-dispatcher.js';
import { percentile } from './percentile.js';

const LATENCY_TASKS = Number(process.env.BENCH_WEBHOOK_TASKS ?? 200);
const DELIVERIES = Number(process.env.BENCH_WEBHOOK_DELIVERIES ?? 2000);
const WARMUP_TASKS = 20;
/** The throughput run's deliveries are drained in this many rounds, each followed by its baseline. */
const THROUGHPUT_ROUNDS = Number(process.env.BENCH_WEBHOOK_ROUNDS ?? 4);
/** Also write a CPU profile of one more drain here (not part of the figures). */
const profileDir = process.env.BENCH_PROFILE_DIR;
/** Pause between latency samples, so that each finds the dispatcher idle (waiting for `notify`). */
const GAP_MS = 10;
const WORKER_ID = 'bench-worker';
const HOOKS = '/hooks/';
/** Baseline requests go to the same receiver under a path of the same length, kept apart from deliveries. */
const PLAIN = '/plain/';

export type Row = [benchmark: string, measured: string, baseline: string, ratio: string];

interface Arrival {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** `performance.now()` when the body had arrived. */
  readonly at: number;
}

/** A request as the dispatcher sent it, to be sent again plainly. */
interface Replay {
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string;
}

interface Receiver {
  readonly url: string;
  /** Everything received, by path, in order of arrival. */
  readonly arrivals: Map<string, Arrival[]>;
  /** Resolves with the `n`th (1-based) request to `path`. */
  arrival(path: string, n: number, timeoutMs?: number): Promise<Arrival>;
  close(): Promise<void>;
}

async function profiled<T>(file: string, run: () => Promise<T>): Promise<T> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  try {
    return await run();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    await writeFile(file, JSON.stringify(profile));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function startReceiver(): Promise<Receiver> {
  const arrivals = new Map<string, Arrival[]>();
  const waiters = new Map<string, () => void>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = performance.now();
      const path = req.url ?? '';
      const arrival: Arrival = {
        path,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at,
      };
      const list = arrivals.get(path) ?? [];
      if (list.length === 0) arrivals.set(path, list);
      list.push(arrival);
      res.writeHead(204).end();
      waiters.get(`${list.length} ${path}`)?.();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    arrivals,
    arrival(path, n, timeoutMs = 10_000) {
      const ready = arrivals.get(path)?.[n - 1];
      if (ready) return Promise.resolve(ready);
      const key = `${n} ${path}`;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(key);
          reject(new Error(`no request number ${n} to ${path} within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.set(key, () => {
          clearTimeout(timer);
          waiters.delete(key);
          resolve(arrivals.get(path)?.[n - 1] as Arrival);
        });
      });
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The SQLite store, telling the bench each time a delivery is recorded as succeeded. */
class CountingStore extends SqliteStore {
  onSucceeded: () => void = () => {};
  /** Outbox traffic, to explain the throughput figure: claims made, rows they took, rows handed back. */
  readonly outbox = { claims: 0, claimed: 0, released: 0 };

  override async claimDeliveries(options: DeliveryClaimOptions): Promise<DeliveryRecord[]> {
    const claimed = await super.claimDeliveries(options);
    this.outbox.claims++;
    this.outbox.claimed += claimed.length;
    return claimed;
  }

  override releaseDelivery(claim: DeliveryClaim): Promise<boolean> {
    this.outbox.released++;
    return super.releaseDelivery(claim);
  }

  override async finishDeliveryAttempts(finished: readonly FinishedDeliveryAttempt[]): Promise<boolean[]> {
    const recorded = await super.finishDeliveryAttempts(finished);
    for (const [i, { outcome }] of finished.entries()) {
      if (recorded[i] && outcome.status === 'succeeded') this.onSucceeded();
    }
    return recorded;
  }
}

/** One plain POST, as `sendWebhook` makes it minus the outbox: no claim, no signing, nothing recorded. */
async function plainPost(agent: Agent, url: string, replay: Replay): Promise<void> {
  const response = await request(`${url}${replay.path}`, {
    method: 'POST',
    headers: replay.headers,
    body: replay.body,
    dispatcher: agent,
  });
  await response.body.dump();
  if (response.statusCode !== 204) throw new Error(`plain POST answered ${response.statusCode}`);
}

function replayOf(arrival: Arrival): Replay {
  const headers: Record<string, string> = {};
  for (const name of ['content-type', 'user-agent', 'webhook-id', 'webhook-timestamp', 'webhook-signature']) {
    headers[name] = String(arrival.headers[name]);
  }
  return { path: PLAIN + arrival.path.slice(HOOKS.length), headers, body: arrival.body };
}

class Bench {
  readonly store: CountingStore;
  readonly receiver: Receiver;
  readonly config: Config;
  readonly links: ResultLinks;
  readonly scope: TaskScope;
  readonly taskIds: string[] = [];

  constructor(store: CountingStore, receiver: Receiver, config: Config, scope: TaskScope) {
    this.store = store;
    this.receiver = receiver;
    this.config = config;
    this.scope = scope;
    this.links = new ResultLinks({
      publicUrl: () => 'http://127.0.0.1:8080',
      secret: 'bench-result-link-secret',
      ttlSeconds: config.resultUrlTtlSeconds,
    });
  }

  /** A dispatcher configured as `startService` configures it. */
  dispatcher(): { webhooks: WebhookDispatcher; close: () => Promise<void> } {
    const dispatcher = createGuardedDispatcher({ allowPrivateNetworks: true });
    const webhooks = new WebhookDispatcher({
      store: this.store,
      dispatcher,
      logger: pino({ level: 'warn' }),
      resultUrl: this.links.resultUrl,
      timeoutMs: this.config.webhookTimeoutMs,
      concurrency: this.config.webhookConcurrency,
      perHostConcurrency: this.config.webhookHostConcurrency,
    });
    webhooks.start();
    return {
      webhooks,
      close: async () => {
        await webhooks.stop(5000);
        await dispatcher.close();
      },
    };
  }

  /** Creates and claims a task with a callback to the receiver (which queues its `task.processing`). */
  async startTask(): Promise<{ id: string; attempt: number }> {
    const id = newTaskId();
    const { model, params } = parseGenerationRequest({
      model: 'videogen-2.0-fast-text-to-video',
      prompt: 'a red kite over green hills',
      seed: 1,
      callback_url: `${this.receiver.url}${HOOKS}${id}`,
    });
    await this.store.createTask({ ...this.scope, id, model: model.id, params });
    this.taskIds.push(id);
    const claimed = await this.store.claimTask({ workerId: WORKER_ID, leaseMs: 60_000, maxAttempts: 3 });
    if (claimed?.id !== id) throw new Error(`claimed ${claimed?.id} instead of ${id}`);
    return { id, attempt: claimed.attempts };
  }

  async completeTask(task: { id: string; attempt: number }): Promise<void> {
    const done = await this.store.completeTask(
      { taskId: task.id, attempt: task.attempt, workerId: WORKER_ID },
      resultKey(task.id),
    );
    if (!done) throw new Error(`completing ${task.id} failed`);
  }

  /**
   * `count` tasks one after another on an idle dispatcher: claim, wait for the processing callback, complete;
   * the sample is commit → arrival of `task.completed`. Returns the samples and the completed requests.
   */
  async latency(webhooks: WebhookDispatcher, count: number): Promise<{ ms: number[]; sent: Replay[] }> {
    const ms: number[] = [];
    const sent: Replay[] = [];
    for (let i = 0; i < count; i++) {
      const task = await this.startTask();
      webhooks.notify();
      await this.receiver.arrival(HOOKS + task.id, 1);
      await sleep(GAP_MS);
      await this.completeTask(task);
      const committed = performance.now();
      webhooks.notify();
      const arrival = await this.receiver.arrival(HOOKS + task.id, 2);
      ms.push(arrival.at - committed);
      sent.push(replayOf(arrival));
      await sleep(GAP_MS);
    }
    return { ms, sent };
  }

  /** The same receiver's latency for plain POSTs of `requests`, one at a time with the same pauses. */
  async plainLatency(agent: Agent, requests: readonly Replay[]): Promise<number[]> {
    const ms: number[] = [];
    for (const replay of requests) {
      const before = performance.now();
      const posted = plainPost(agent, this.receiver.url, replay);
      const arrival = await this.receiver.arrival(replay.path, 1);
      ms.push(arrival.at - before);
      await posted;
      await sleep(2 * GAP_MS);
    }
    return ms;
  }

  /** Queues `deliveries` (processing and completed of half as many tasks) with no dispatcher running. */
  async queue(deliveries: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < deliveries / 2; i++) {
      const task = await this.startTask();
      await this.completeTask(task);
      ids.push(task.id);
    }
    return ids;
  }

  /** Starts a dispatcher on the queued deliveries; milliseconds until `count` are recorded as succeeded. */
  async drain(count: number): Promise<number> {
    let succeeded = 0;
    let allDone: () => void = () => {};
    const finished = new Promise<void>((resolve) => {
      allDone = resolve;
    });
    this.store.onSucceeded = () => {
      if (++succeeded === count) allDone();
    };
    const outbox = { ...this.store.outbox };
    const started = performance.now();
    const { close } = this.dispatcher();
    const timeout = setTimeout(() => allDone(), 600_000);
    await finished;
    const elapsed = performance.now() - started;
    clearTimeout(timeout);
    this.store.onSucceeded = () => {};
    await close();
    if (succeeded !== count) throw new Error(`only ${succeeded} of ${count} deliveries succeeded`);
    const { claims, claimed, released } = this.store.outbox;
    console.error(
      `webhooks: draining ${count} deliveries took ${claims - outbox.claims} claims of ${claimed - outbox.claimed} rows in all, ${released - outbox.released} handed back unsent`,
    );
    return elapsed;
  }

  /** Milliseconds for plain POSTs of `requests`, `concurrency` at a time. */
  async plainDrain(agent: Agent, requests: readonly Replay[], concurrency: number): Promise<number> {
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < requests.length) {
          const replay = requests[next++] as Replay;
          await plainPost(agent, this.receiver.url, replay);
        }
      }),
    );
    return performance.now() - started;
  }

  /**
   * Every task's two deliveries logged as succeeded after one attempt, every delivery received exactly once
   * under its task's path, signed with the account's secret, carrying the task in the event's status.
   */
  async verify(): Promise<number> {
    const problems: string[] = [];
    const secrets = (await this.store.getWebhookSecrets(this.scope.accountId)).map((s) => s.secret);
    if (secrets.length !== 1) problems.push(`expected one signing secret, found ${secrets.length}`);
    const verifier = new Webhook(secrets[0] ?? '');
    const stats = await this.store.queueStats();
    if (stats.pendingDeliveries !== 0) problems.push(`${stats.pendingDeliveries} deliveries still pending`);

    let checked = 0;
    const seenPaths = new Set<string>();
    for (const taskId of this.taskIds) {
      const path = HOOKS + taskId;
      seenPaths.add(path);
      const deliveries = await this.store.listDeliveries(taskId);
      // Both of a queued task's deliveries may share a millisecond, so their order in the log is not fixed.
      const events = deliveries
        .map((d) => d.event)
        .sort()
        .join(',');
      if (events !== 'task.completed,task.processing') problems.push(`${taskId}: deliveries ${events}`);
      const received = new Map<string, Arrival[]>();
      for (const arrival of this.receiver.arrivals.get(path) ?? []) {
        const id = String(arrival.headers['webhook-id']);
        received.set(id, [...(received.get(id) ?? []), arrival]);
      }
      for (const delivery of deliveries) {
        const attempts = delivery.attempts.map((a) => a.httpStatus ?? a.error).join(',');
        if (delivery.status !== 'succeeded' || attempts !== '204') {
          problems.push(`${delivery.id}: ${delivery.status} after attempts ${attempts}`);
        }
        const arrivals = received.get(delivery.id) ?? [];
        received.delete(delivery.id);
        if (arrivals.length !== 1) {
          problems.push(`${delivery.id} (${delivery.event}) received ${arrivals.length} times`);
        }
        for (const arrival of arrivals) {
          checked++;
          try {
            const payload = verifier.verify(arrival.body, {
              'webhook-id': String(arrival.headers['webhook-id']),
              'webhook-timestamp': String(arrival.headers['webhook-timestamp']),
              'webhook-signature': String(arrival.headers['webhook-signature']),
            }) as { id?: unknown; status?: unknown; results?: unknown };
            if (payload.id !== taskId || `task.${String(payload.status)}` !== delivery.event) {
              problems.push(`${delivery.id}: body is ${String(payload.id)} ${String(payload.status)}`);
            }
            const results = Array.isArray(payload.results) ? payload.results : [];
            if (delivery.event === 'task.completed' && results.length !== 1) {
              problems.push(`${delivery.id}: completed callback without a result link`);
            }
          } catch (error) {
            problems.push(`${delivery.id}: signature rejected (${(error as Error).message})`);
          }
        }
      }
      for (const [id, extra] of received)
        problems.push(`${taskId}: unknown webhook-id ${id} ×${extra.length}`);
    }
    for (const path of this.receiver.arrivals.keys()) {
      if (path.startsWith(HOOKS) && !seenPaths.has(path)) problems.push(`request to unexpected path ${path}`);
    }
    if (problems.length > 0) {
      throw new Error(
        `webhook verification failed (${problems.length} problems):\n  ${problems.slice(0, 20).join('\n  ')}`,
      );
    }
    return checked;
  }
}

export async function webhookBenchmarks(): Promise<Row[]> {
  const dataDir = await mkdtemp(join(tmpdir(), 'videogen-bench-webhooks-'));
  const webhookEnv = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => name.startsWith('VIDEOGEN_WEBHOOK_')),
  );
  const config = loadConfig({ ...webhookEnv, VIDEOGEN_DATA_DIR: dataDir });
  // Opened as `startService` opens it: WAL checkpoints in a worker thread, not in commits on the event loop.
  const store = new CountingStore({ path: join(dataDir, 'videogen.db'), checkpointInBackground: true });
  const receiver = await startReceiver();
  const agent = new Agent();
  try {
    await store.migrate();
    const scope: TaskScope = { accountId: (await store.createAccount()).id, environment: 'development' };
    const bench = new Bench(store, receiver, config, scope);
    const perReceiver = Math.min(config.webhookConcurrency, config.webhookHostConcurrency);

    // 1. Latency, warmed up first on both paths.
    const running = bench.dispatcher();
    const warm = await bench.latency(running.webhooks, WARMUP_TASKS);
    await bench.plainLatency(agent, warm.sent);
    const measured = await bench.latency(running.webhooks, LATENCY_TASKS);
    await running.close();
    const plain = await bench.plainLatency(agent, measured.sent);

    // 2. Throughput, in rounds that alternate with their baseline, so that a change in the machine's load
    // during the run falls on both.
    let count = 0;
    let drainMs = 0;
    let plainMs = 0;
    const roundDeliveries = Math.ceil(DELIVERIES / THROUGHPUT_ROUNDS);
    for (let round = 0; round < THROUGHPUT_ROUNDS; round++) {
      const queuedTasks = await bench.queue(roundDeliveries);
      const queued = queuedTasks.length * 2;
      drainMs += await bench.drain(queued);
      const requests = queuedTasks.flatMap((id) => (receiver.arrivals.get(HOOKS + id) ?? []).map(replayOf));
      if (requests.length !== queued) throw new Error(`received ${requests.length} of ${queued} deliveries`);
      plainMs += await bench.plainDrain(agent, requests, perReceiver);
      count += queued;
    }
    if (profileDir) {
      // One more round, profiled, outside the figures.
      const queued = (await bench.queue(roundDeliveries)).length * 2;
      await profiled(join(profileDir, 'webhooks-drain.cpuprofile'), () => bench.drain(queued));
    }

    const checked = await bench.verify();
    console.error(
      `webhooks: ${checked} deliveries of ${bench.taskIds.length} tasks each received once, signature valid`,
    );

    const sortedMeasured = [...measured.ms].sort((a, b) => a - b);
    const sortedPlain = [...plain].sort((a, b) => a - b);
    const p = (sorted: number[], at: number) => percentile(sorted, at);
    const perSecond = (count / drainMs) * 1000;
    const plainPerSecond = (count / plainMs) * 1000;
    return [
      [
        `callback latency p50, completeTask → receiver (${LATENCY_TASKS} tasks)`,
        `${p(sortedMeasured, 50).toFixed(2)} ms`,
        `plain undici POST ${p(sortedPlain, 50).toFixed(2)} ms`,
        (p(sortedMeasured, 50) / p(sortedPlain, 50)).toFixed(2),
      ],
      [
        `callback latency p99, completeTask → receiver (${LATENCY_TASKS} tasks)`,
        `${p(sortedMeasured, 99).toFixed(2)} ms`,
        `plain undici POST ${p(sortedPlain, 99).toFixed(2)} ms`,
        (p(sortedMeasured, 99) / p(sortedPlain, 99)).toFixed(2),
      ],
      [
        `callback throughput, ${count} queued → succeeded, ${perReceiver} per receiver`,
        `${perSecond.toFixed(0)} deliveries/s`,
        `plain undici POSTs, ${perReceiver} at once, ${plainPerSecond.toFixed(0)} req/s`,
        (perSecond / plainPerSecond).toFixed(2),
      ],
    ];
  } finally {
    await agent.close();
    await receiver.close();
    await store.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rows = await webhookBenchmarks();
  console.log('| benchmark | measured | baseline (same run) | ratio |');
  console.log('|---|---|---|---|');
  for (const row of rows) console.log(`| ${row.join(' | ')} |`);
}

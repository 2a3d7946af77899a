/**
 * The API's two hot paths, each as a ratio against its floor measured beside it in the same run (issue 18):
 * 1. polling: `GET /v1/tasks/{id}` on a completed task (auth, rate limit, store read, signed link, JSON) vs a
 *    bare Fastify route answering the same JSON;
 * 2. creation: `POST /v1/videos/generations` vs a bare Fastify POST that parses the same body, with the queue
 *    cap on, at an empty queue (also with a new `Idempotency-Key` on each request) and again with 20 000 pending
 *    tasks (inserted through SQL beforehand), to show whether creation depends on the queue's depth.
 * Beside polling, its ceiling: the least an authenticated poll does (the key's hash looked up, a request id, the
 * task made into JSON by its schema), with and without the store's read of the task, against the same floor;
 * beside creation, its ceiling: the same, the body validated and the task written through the store.
 * On SQLite, then on PostgreSQL (VIDEOGEN_BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test,
 * in a fresh schema dropped afterwards; skipped with a message when it is unreachable). Only the API runs (no
 * workers), so created tasks stay pending. autocannon (20 connections) runs in this process, for the paths and
 * their floors alike.
 *
 * `BENCH_SECONDS` (default 10): seconds of each path and of its floor, run in alternating one-second slices;
 * `BENCH_PENDING` (default 20 000): the deep queue's depth; `BENCH_STORES` (`sqlite,postgres`) and
 * `BENCH_PATHS` (`poll,create`): what to measure; `BENCH_PROFILE_DIR`: also write a CPU profile of each path,
 * from a run of its own after its figures.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import autocannon from 'autocannon';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { Kysely, SqliteDialect } from 'kysely';
import pg from 'pg';
import { pino } from 'pino';
import { createApiKey } from '../src/accounts/api-keys.js';
import { loadConfig } from '../src/config.js';
import { parseGenerationRequest } from '../src/domain/generation-request.js';
import { hashApiKey, newTaskId } from '../src/domain/identifiers.js';
import { resultKey } from '../src/domain/storage-keys.js';
import { SHARED_SCHEMAS, TaskSchema } from '../src/http/schemas.js';
import { startService } from '../src/service.js';
import type { Database } from '../src/store/database-schema.js';
import { openPgDatabase, quoteIdentifier } from '../src/store/pg/pg-database.js';
import { openDatabase } from '../src/store/sqlite/sqlite-handles.js';
import { StatementCache } from '../src/store/sqlite/sqlite-statement-cache.js';
import { toTaskRow } from '../src/store/task-row.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const pendingDepth = Number(process.env.BENCH_PENDING ?? 20_000);
const DATABASE_URL = process.env.VIDEOGEN_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const stores = new Set((process.env.BENCH_STORES ?? 'sqlite,postgres').split(','));
const paths = new Set((process.env.BENCH_PATHS ?? 'poll,create').split(','));

const CREATE_BODY = JSON.stringify({
  model: 'videogen-2.0-fast-text-to-video',
  prompt: 'a red kite over green hills',
  seed: 1,
});

const profileDir = process.env.BENCH_PROFILE_DIR;

type Row = [string, string, string, string];

/** A CPU profile of `seconds` more of the path alone, written to BENCH_PROFILE_DIR (not part of the figures). */
async function profile(name: string, path: Load): Promise<void> {
  if (!profileDir) return;
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  try {
    await requestsIn(path, seconds);
  } finally {
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    await writeFile(join(profileDir, `${name}.cpuprofile`), JSON.stringify(profile));
  }
}

interface Load {
  readonly url: string;
  readonly headers?: Record<string, string>;
  readonly method?: 'GET' | 'POST';
  readonly body?: string;
  /** Each request with an `Idempotency-Key` of its own. */
  readonly newIdempotencyKeys?: boolean;
}

/** Requests answered in `duration` seconds by 20 connections; any error or non-2xx answer fails the run. */
async function requestsIn(load: Load, duration: number): Promise<number> {
  const { newIdempotencyKeys, ...request } = load;
  const result = await autocannon({
    ...request,
    connections: 20,
    duration,
    ...(newIdempotencyKeys && {
      requests: [
        {
          setupRequest: (sent) => ({
            ...sent,
            headers: { ...sent.headers, 'idempotency-key': randomUUID() },
          }),
        },
      ],
    }),
  });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${load.url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return result.requests.total;
}

/**
 * Requests per second of the path and of its floor, measured in alternating one-second slices (`seconds` of
 * each), so that load from outside the benchmark falls on both alike.
 */
async function compare(name: string, path: Load, floor: Load): Promise<{ measured: number; floor: number }> {
  let measured = 0;
  let floorTotal = 0;
  const slices = Math.max(1, Math.round(seconds));
  for (let slice = 0; slice < slices; slice++) {
    floorTotal += await requestsIn(floor, 1);
    measured += await requestsIn(path, 1);
  }
  await profile(name, path);
  return { measured: measured / slices, floor: floorTotal / slices };
}

interface BareApp {
  /** The floors' route: GET answers `getBody`, POST parses the request's JSON and answers `postBody`. */
  readonly url: string;
  /** Polling's ceiling: the least an authenticated poll does, on the same bare app (`bareApp`). */
  readonly leastPollUrl: string;
  /** The same, reading the task from the store as well. */
  readonly leastPollWithReadUrl: string;
  /** Creation's ceiling: the least a creation does (`bareApp`). */
  readonly leastCreateUrl: string;
  close(): Promise<void>;
}

/**
 * The floors: a bare Fastify app answering a fixed JSON body, its POST parsing the request's JSON first. Beside
 * them, polling's ceiling: a route doing only what no poll can do without, the SHA-256 of the key
 * (`hashApiKey`) looked up in a set as the key cache's hit, the `x-request-id` header, and the task made into
 * JSON by the API's own response schema; no rate limit, no metrics, no request log. A second route also reads
 * the task from the store (`poll.read`), as a poll must. What a poll reaches against the floor cannot exceed
 * what these routes reach (issue 18 asks 0.8). Creation's ceiling: the same hook, the body validated by the
 * domain's parser and the task written through the store (`create`), the created task answered by its schema.
 */
async function bareApp(
  getBody: string,
  postBody: string,
  poll: { readonly secret: string; readonly task: unknown; readonly read: () => Promise<unknown> },
  create: { readonly task: unknown; readonly write: (body: unknown) => Promise<unknown> },
): Promise<BareApp> {
  const bare: FastifyInstance = Fastify();
  bare.get('/bare', async (_request, reply) => reply.type('application/json').send(getBody));
  bare.post('/bare', async (request, reply) => {
    if (typeof request.body !== 'object' || request.body === null) throw new Error('no body parsed');
    return reply.type('application/json').send(postBody);
  });
  for (const schema of SHARED_SCHEMAS) bare.addSchema(schema);
  const keys = new Set([hashApiKey(poll.secret)]);
  let requests = 0;
  const least = {
    onRequest: (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
      // An error answers 500, which fails the run like any answer but 2xx.
      if (!match?.[1] || !keys.has(hashApiKey(match[1]))) return done(new Error('unknown key'));
      reply.header('x-request-id', `req_${(requests++).toString(36)}`);
      done();
    },
    schema: { response: { 200: Type.Ref(TaskSchema) } },
  };
  bare.get('/least/:task_id', least, async () => poll.task);
  bare.get('/least-read/:task_id', least, async () => {
    if (!(await poll.read())) throw new Error('the task was not read');
    return poll.task;
  });
  bare.post('/least-create', least, async (request) => {
    await create.write(request.body);
    return create.task;
  });
  await bare.listen({ host: '127.0.0.1', port: 0 });
  const address = bare.server.address();
  const origin = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return {
    url: `${origin}/bare`,
    leastPollUrl: `${origin}/least/task`,
    leastPollWithReadUrl: `${origin}/least-read/task`,
    leastCreateUrl: `${origin}/least-create`,
    close: () => bare.close(),
  };
}

/** Where a store lives, a second connection to insert the deep queue's rows with, and how to clean up. */
interface StoreSetup {
  readonly name: string;
  readonly env: Record<string, string>;
  insertPending(rows: ReturnType<typeof toTaskRow>[]): Promise<void>;
  countPending(): Promise<number>;
  close(): Promise<void>;
}

async function countPendingRows(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('tasks')
    .select((eb) => eb.fn.countAll().as('count'))
    .where('status', '=', 'pending')
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

async function insertInChunks(db: Kysely<Database>, rows: ReturnType<typeof toTaskRow>[]): Promise<void> {
  await db.transaction().execute(async (trx) => {
    for (let at = 0; at < rows.length; at += 1000) {
      await trx
        .insertInto('tasks')
        .values(rows.slice(at, at + 1000))
        .execute();
    }
  });
}

function sqliteSetup(dataDir: string): StoreSetup {
  const path = join(dataDir, 'videogen.db');
  let db: Kysely<Database> | undefined;
  const open = () => {
    db ??= new Kysely<Database>({
      dialect: new SqliteDialect({ database: new StatementCache(openDatabase(path)) }),
    });
    return db;
  };
  return {
    name: 'SQLite',
    env: { VIDEOGEN_DATABASE_URL: path },
    insertPending: (rows) => insertInChunks(open(), rows),
    countPending: () => countPendingRows(open()),
    async close() {
      await db?.destroy();
    },
  };
}

async function postgresSetup(): Promise<StoreSetup | string> {
  const client = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 3000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    return `PostgreSQL at ${DATABASE_URL} is unreachable (${error instanceof Error ? error.message : error})`;
  } finally {
    await client.end().catch(() => undefined);
  }
  const schema = `vg_bench_hot_${randomBytes(4).toString('hex')}`;
  let database: ReturnType<typeof openPgDatabase> | undefined;
  const open = () => {
    database ??= openPgDatabase({ connectionString: DATABASE_URL, schema, poolSize: 1 });
    return database.db;
  };
  return {
    name: 'PostgreSQL',
    env: { VIDEOGEN_DATABASE_URL: DATABASE_URL, VIDEOGEN_DATABASE_SCHEMA: schema },
    insertPending: (rows) => insertInChunks(open(), rows),
    countPending: () => countPendingRows(open()),
    async close() {
      await database?.db.destroy();
      const dropper = new pg.Client({ connectionString: DATABASE_URL });
      await dropper.connect();
      try {
        await dropper.query(`drop schema if exists ${quoteIdentifier(schema)} cascade`);
      } finally {
        await dropper.end();
      }
    },
  };
}

async function measureStore(setup: StoreSetup, dataDir: string): Promise<Row[]> {
  const config = loadConfig({
    VIDEOGEN_DATA_DIR: dataDir,
    VIDEOGEN_HOST: '127.0.0.1',
    VIDEOGEN_PORT: '0',
    VIDEOGEN_ROLE: 'api',
    // The rate limiter stays on, so its cost is part of both paths, but autocannon never reaches it.
    VIDEOGEN_RATE_LIMIT_PER_MINUTE: '1000000000',
    // The cap is on, so that its check is part of creation, and far above what the runs queue.
    VIDEOGEN_MAX_QUEUED_TASKS: '10000000',
    ...setup.env,
  });
  const service = await startService(config, pino({ level: 'warn' }));
  const { key, record } = await createApiKey(service.store, { name: 'bench', environment: 'development' });
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const base = service.publicUrl;
  const rows: Row[] = [];
  let bare: Awaited<ReturnType<typeof bareApp>> | undefined;
  try {
    const created = await fetch(`${base}/v1/videos/generations`, {
      method: 'POST',
      headers: auth,
      body: CREATE_BODY,
    });
    const createdBody = await created.text();
    const taskId = (JSON.parse(createdBody) as { id: string }).id;
    const claim = await service.store.claimTask({ workerId: 'bench', leaseMs: 600_000, maxAttempts: 3 });
    if (claim?.id !== taskId) throw new Error('the bench task was not claimed');
    await service.store.completeTask(
      { taskId, attempt: claim.attempts, workerId: 'bench' },
      resultKey(taskId),
    );
    const polledBody = await (await fetch(`${base}/v1/tasks/${taskId}`, { headers: auth })).text();
    if (!polledBody.includes('"completed"'))
      throw new Error(`the bench task is not completed: ${polledBody}`);
    const scope = { accountId: record.accountId, environment: record.environment };
    bare = await bareApp(
      polledBody,
      createdBody,
      {
        secret: key,
        task: JSON.parse(polledBody),
        read: () => service.store.getTask(taskId, scope),
      },
      {
        task: JSON.parse(createdBody),
        write: (body) => {
          const { model, params } = parseGenerationRequest(body);
          return service.store.createTask({
            id: newTaskId(),
            ...scope,
            model: model.id,
            params,
            apiKeyId: record.id,
          });
        },
      },
    );

    if (paths.has('poll')) {
      const polling = await compare(
        `${setup.name}-poll`,
        { url: `${base}/v1/tasks/${taskId}`, headers: auth },
        { url: bare.url },
      );
      rows.push(ratioRow(`${setup.name}: polling GET /v1/tasks/{id}`, polling, 'bare Fastify GET'));
      const least = await compare(
        `${setup.name}-least-poll`,
        { url: bare.leastPollUrl, headers: auth },
        { url: bare.url },
      );
      rows.push(
        ratioRow(
          `${setup.name}: polling's ceiling (key hash and lookup, request id, the task by its schema)`,
          least,
          'bare Fastify GET',
        ),
      );
      const leastWithRead = await compare(
        `${setup.name}-least-poll-read`,
        { url: bare.leastPollWithReadUrl, headers: auth },
        { url: bare.url },
      );
      rows.push(
        ratioRow(`${setup.name}: polling's ceiling and the store's read`, leastWithRead, 'bare Fastify GET'),
      );
    }
    if (paths.has('create')) rows.push(...(await measureCreation(setup, base, auth, bare, record)));
    // autocannon stops with requests in flight and drops their connections; let their handlers end before
    // the store closes under them.
    await new Promise((resolve) => setTimeout(resolve, 500));
  } finally {
    await bare?.close();
    await service.close();
    await setup.close();
  }
  return rows;
}

async function measureCreation(
  setup: StoreSetup,
  base: string,
  auth: Record<string, string>,
  bare: BareApp,
  key: { accountId: string; id: string },
): Promise<Row[]> {
  const rows: Row[] = [];

  const post = { method: 'POST' as const, body: CREATE_BODY };
  const create = { ...post, url: `${base}/v1/videos/generations`, headers: auth };
  const floor = { ...post, url: bare.url, headers: { 'content-type': 'application/json' } };
  const empty = await compare(`${setup.name}-create-empty`, create, floor);
  rows.push(ratioRow(`${setup.name}: POST /v1/videos/generations, empty queue`, empty, 'bare Fastify POST'));
  const keyed = await compare(`${setup.name}-create-keyed`, { ...create, newIdempotencyKeys: true }, floor);
  rows.push(ratioRow(`${setup.name}: the same, each with a new Idempotency-Key`, keyed, 'bare Fastify POST'));

  // Topped up to exactly `pendingDepth`: the empty-queue run left its own tasks pending.
  const missing = Math.max(0, pendingDepth - (await setup.countPending()));
  const now = Date.now();
  const { model, params } = parseGenerationRequest(JSON.parse(CREATE_BODY));
  const pending = Array.from({ length: missing }, (_, index) =>
    toTaskRow(
      {
        id: newTaskId(),
        accountId: key.accountId,
        environment: 'development',
        model: model.id,
        params,
        apiKeyId: key.id,
      },
      now - missing + index,
    ),
  );
  await setup.insertPending(pending);
  const depth = await setup.countPending();
  const deep = await compare(`${setup.name}-create-deep`, create, floor);
  rows.push(
    ratioRow(`${setup.name}: POST /v1/videos/generations, ${depth} pending`, deep, 'bare Fastify POST'),
  );
  // Last, so that the deep run is at the depth asked: this route's tasks stay pending too.
  const least = await compare(`${setup.name}-least-create`, { ...create, url: bare.leastCreateUrl }, floor);
  rows.push(
    ratioRow(
      `${setup.name}: creation's ceiling (key, the request validated, the task written)`,
      least,
      'bare Fastify POST',
    ),
  );
  return rows;
}

function ratioRow(
  name: string,
  { measured, floor }: { measured: number; floor: number },
  floorName: string,
): Row {
  return [
    name,
    `${measured.toFixed(0)} req/s`,
    `${floorName} ${floor.toFixed(0)} req/s`,
    (measured / floor).toFixed(2),
  ];
}

export async function hotPathBenchmarks(): Promise<Row[]> {
  const rows: Row[] = [];
  if (stores.has('sqlite')) {
    const sqliteDir = await mkdtemp(join(tmpdir(), 'videogen-bench-'));
    try {
      rows.push(...(await measureStore(sqliteSetup(sqliteDir), sqliteDir)));
    } finally {
      await rm(sqliteDir, { recursive: true, force: true });
    }
  }
  if (!stores.has('postgres')) return rows;
  const postgres = await postgresSetup();
  if (typeof postgres === 'string') {
    console.error(`${postgres}; PostgreSQL skipped`);
    return rows;
  }
  const pgDir = await mkdtemp(join(tmpdir(), 'videogen-bench-'));
  try {
    rows.push(...(await measureStore(postgres, pgDir)));
  } finally {
    await rm(pgDir, { recursive: true, force: true });
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = await hotPathBenchmarks();
  console.log('| benchmark | measured | floor (same run) | ratio |');
  console.log('|---|---|---|---|');
  for (const row of rows) console.log(`| ${row.join(' | ')} |`);
}

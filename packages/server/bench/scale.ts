/**
 * The task reads at scale: each store filled with BENCH_SCALE_TASKS tasks (default 1 000 000), loaded in bulk
 * rather than through the API, then polling (`getTask` with its scope), `GET /v1/tasks`'s first page, a page
 * 90 % deep through its cursor, and first and deep pages filtered by status, model and a creation window, each
 * timed through the store's own operations and set beside the unfiltered first page of the same run.
 *
 * The tasks: four accounts of unequal size, 80 % production, six models, created over 180 days in creation
 * order (one in twenty in the same millisecond as the one before, as a batch would be), 92 % completed, 7 %
 * failed and the newest few pending or processing. Every query reads the largest scope (the first account's
 * production tasks, about 44 % of them). The same rows, from a seeded generator, go into SQLite (a temporary
 * file) and PostgreSQL (a fresh schema, dropped afterwards; VIDEOGEN_BENCH_DATABASE_URL, default
 * postgres://postgres@127.0.0.1:5432/test, skipped when unreachable). BENCH_SCALE_SAMPLES (default 300) sets
 * the timed runs of each query; the queries take turns, so a busy moment of the machine hits them all alike.
 * BENCH_STORES (`sqlite,postgres`) picks the stores.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Insertable } from 'kysely';
import pg from 'pg';
import { MODEL_IDS, type ModelId } from '../src/domain/models.js';
import type { TaskScope, TaskStatus } from '../src/domain/task.js';
import type { Store, TaskListQuery } from '../src/ports/store.js';
import type { TasksTable } from '../src/store/database-schema.js';
import { MIGRATION_LOCK_KEY, quoteIdentifier } from '../src/store/pg/pg-database.js';
import { PgStore } from '../src/store/pg/pg-store.js';
import { openDatabase, pragma, prepare } from '../src/store/sqlite/sqlite-handles.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { percentile } from './percentile.js';

const TASKS = Number(process.env.BENCH_SCALE_TASKS ?? 1_000_000);
const SAMPLES = Number(process.env.BENCH_SCALE_SAMPLES ?? 300);
const WARMUP = 20;
const PAGE = 20;
const DATABASE_URL = process.env.VIDEOGEN_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const STORES = new Set((process.env.BENCH_STORES ?? 'sqlite,postgres').split(','));

const DAY = 86_400_000;
const END = Date.UTC(2026, 10, 24);
const START = END - 180 * DAY;
const ACCOUNT_WEIGHTS = [0.55, 0.25, 0.12, 0.08];
const MODEL_WEIGHTS = [0.3, 0.15, 0.05, 0.3, 0.15, 0.05];
const PROMPTS = [
  'a red kite over green hills at sunset, slow dolly in',
  'waves breaking on black volcanic sand, drone shot, golden hour',
  'a barista pouring latte art in a busy café, shallow depth of field',
  'neon rain on a Tokyo side street at night, handheld camera',
  'a paper boat drifting down a gutter stream after a summer storm',
];
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** mulberry32: the same tasks on every run and in both stores. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function weighted(random: () => number, weights: readonly number[]): number {
  let left = random();
  for (let i = 0; i < weights.length; i++) {
    left -= weights[i] ?? 0;
    if (left < 0) return i;
  }
  return weights.length - 1;
}

type TaskRow = Insertable<TasksTable>;

/** The tasks in creation order, in batches of `size`. */
function* taskRows(accounts: readonly string[], size: number): Generator<TaskRow[]> {
  const random = generator(18);
  const step = (END - START) / TASKS;
  let createdAt = START;
  let batch: TaskRow[] = [];
  for (let i = 0; i < TASKS; i++) {
    if (i === 0 || random() >= 0.05) createdAt = Math.max(createdAt + 1, Math.floor(START + i * step));
    let id = 'task-unified-';
    for (let c = 0; c < 26; c++) id += CROCKFORD[Math.floor(random() * 32)];
    const model = MODEL_IDS[weighted(random, MODEL_WEIGHTS)] as ModelId;
    const newest = TASKS - i <= Math.max(10, TASKS / 2000);
    const status: TaskStatus = newest
      ? random() < 0.5
        ? 'pending'
        : 'processing'
      : random() < 0.93
        ? 'completed'
        : 'failed';
    const completedAt =
      status === 'completed' || status === 'failed' ? createdAt + 20_000 + (i % 90_000) : null;
    batch.push({
      id,
      account_id: accounts[weighted(random, ACCOUNT_WEIGHTS)] as string,
      environment: random() < 0.8 ? 'production' : 'development',
      model,
      status,
      progress: status === 'completed' ? 100 : status === 'processing' ? 40 : 0,
      revision: status === 'pending' ? 1 : status === 'processing' ? 3 : 4,
      params: JSON.stringify({
        prompt: PROMPTS[i % PROMPTS.length],
        image_urls: model.includes('image') ? ['https://assets.example.com/still.png'] : [],
        video_urls: [],
        audio_urls: [],
        duration: 5 + (i % 3) * 5,
        quality: i % 4 === 0 ? '1080p' : '720p',
        aspect_ratio: '16:9',
        seed: i,
        callback_url: null,
      }),
      callback_url: null,
      error_code: status === 'failed' ? 'generation_failed' : null,
      error_message: status === 'failed' ? 'The engine could not render the request.' : null,
      result_key: status === 'completed' ? `results/${id}.mp4` : null,
      attempts: status === 'pending' ? 0 : 1,
      lease_owner: status === 'processing' ? 'bench-worker' : null,
      lease_expires_at: status === 'processing' ? END + 60_000 : null,
      created_at: createdAt,
      updated_at: completedAt ?? createdAt,
      completed_at: completedAt,
      engine: status === 'pending' ? null : 'local',
      api_key_id: null,
    });
    if (batch.length === size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

const COLUMNS = [
  'id',
  'account_id',
  'environment',
  'model',
  'status',
  'progress',
  'params',
  'callback_url',
  'error_code',
  'error_message',
  'result_key',
  'attempts',
  'lease_owner',
  'lease_expires_at',
  'created_at',
  'updated_at',
  'completed_at',
  'engine',
  'api_key_id',
] as const satisfies readonly (keyof TaskRow)[];

/** Multi-row inserts, 500 rows a statement and 50 000 a transaction, on a connection of its own. */
function fillSqlite(path: string, accounts: readonly string[]): void {
  const database = openDatabase(path);
  try {
    pragma(database, 'journal_mode = WAL');
    pragma(database, 'synchronous = NORMAL');
    const rowsPerStatement = 500;
    const placeholders = `(${COLUMNS.map(() => '?').join(', ')})`;
    const insert = prepare(
      database,
      `insert into tasks (${COLUMNS.join(', ')}) values ${Array(rowsPerStatement).fill(placeholders).join(', ')}`,
    );
    const insertRows = (rows: readonly TaskRow[]) => {
      const values = rows.flatMap((row) => COLUMNS.map((column) => row[column] ?? null));
      if (rows.length === rowsPerStatement) insert.run(values);
      else {
        prepare(
          database,
          `insert into tasks (${COLUMNS.join(', ')}) values ${Array(rows.length).fill(placeholders).join(', ')}`,
        ).run(values);
      }
    };
    const fillBatch = database.transaction((rows: readonly TaskRow[]) => {
      for (let i = 0; i < rows.length; i += rowsPerStatement) insertRows(rows.slice(i, i + rowsPerStatement));
    });
    for (const batch of taskRows(accounts, 50_000)) fillBatch(batch);
    pragma(database, 'wal_checkpoint(TRUNCATE)');
  } finally {
    database.close();
  }
}

/** 20 000 rows a statement, each its own transaction, sent as one JSON array. */
async function fillPg(client: pg.Client, schema: string, accounts: readonly string[]): Promise<void> {
  const table = `${quoteIdentifier(schema)}.tasks`;
  for (const batch of taskRows(accounts, 20_000)) {
    await client.query(
      `insert into ${table} (${COLUMNS.join(', ')})
       select ${COLUMNS.join(', ')} from json_populate_recordset(null::${table}, $1)`,
      [JSON.stringify(batch)],
    );
  }
  // What autovacuum would do after such a load, done now rather than racing the measurements.
  await client.query(`vacuum analyze ${table}`);
}

/** Reads behind the store: how many tasks a query matches, and the cursor of the one `offset` deep. */
interface Probe {
  count(scope: TaskScope, query: Filter): Promise<number>;
  cursorAt(scope: TaskScope, query: Filter, offset: number): Promise<{ createdAt: number; id: string }>;
}

type Filter = Omit<TaskListQuery, 'limit' | 'after'>;

function whereOf(scope: TaskScope, filter: Filter, placeholder: (n: number) => string) {
  const values: (string | number)[] = [scope.accountId, scope.environment];
  const clauses = [`account_id = ${placeholder(1)}`, `environment = ${placeholder(2)}`];
  const add = (clause: string, value: string | number) => {
    values.push(value);
    clauses.push(`${clause} ${placeholder(values.length)}`);
  };
  if (filter.status) add('status =', filter.status);
  if (filter.model) add('model =', filter.model);
  if (filter.createdAfter !== undefined) add('created_at >=', filter.createdAfter);
  if (filter.createdBefore !== undefined) add('created_at <', filter.createdBefore);
  return { where: clauses.join(' and '), values };
}

function sqliteProbe(path: string): Probe & { close(): void } {
  const database = openDatabase(path, { readonly: true });
  return {
    async count(scope, filter) {
      const { where, values } = whereOf(scope, filter, () => '?');
      return (
        prepare(database, `select count(*) as n from tasks where ${where}`).get(values) as { n: number }
      ).n;
    },
    async cursorAt(scope, filter, offset) {
      const { where, values } = whereOf(scope, filter, () => '?');
      const row = prepare(
        database,
        `select created_at, id from tasks where ${where} order by created_at desc, id desc limit 1 offset ?`,
      ).get([...values, offset]) as { created_at: number; id: string };
      return { createdAt: row.created_at, id: row.id };
    },
    close: () => database.close(),
  };
}

function pgProbe(client: pg.Client, schema: string): Probe {
  const table = `${quoteIdentifier(schema)}.tasks`;
  return {
    async count(scope, filter) {
      const { where, values } = whereOf(scope, filter, (n) => `$${n}`);
      const { rows } = await client.query<{ n: string }>(
        `select count(*) as n from ${table} where ${where}`,
        values,
      );
      return Number(rows[0]?.n);
    },
    async cursorAt(scope, filter, offset) {
      const { where, values } = whereOf(scope, filter, (n) => `$${n}`);
      const { rows } = await client.query<{ created_at: string; id: string }>(
        `select created_at, id from ${table} where ${where} order by created_at desc, id desc
         limit 1 offset $${values.length + 1}`,
        [...values, offset],
      );
      const row = rows[0];
      if (!row) throw new Error('no task at that depth');
      return { createdAt: Number(row.created_at), id: row.id };
    },
  };
}

interface Case {
  readonly name: string;
  readonly run: () => Promise<unknown>;
}

/** The queries to time against one filled store, each checked once for the page it must return. */
async function cases(store: Store, probe: Probe, scope: TaskScope): Promise<Case[]> {
  const filters: [string, Filter][] = [
    ['', {}],
    [', status=failed', { status: 'failed' }],
    [', model=videogen-2.0-fast-image-to-video', { model: 'videogen-2.0-fast-image-to-video' }],
    [
      ', status=completed, model=videogen-2.0-reference-to-video',
      {
        status: 'completed',
        model: 'videogen-2.0-reference-to-video',
      },
    ],
    [', created in a 30-day window', { createdAfter: START + 60 * DAY, createdBefore: START + 90 * DAY }],
    [
      ', status=failed, model=videogen-2.0-text-to-video, created after day 60',
      { status: 'failed', model: 'videogen-2.0-text-to-video', createdAfter: START + 60 * DAY },
    ],
  ];
  const list: Case[] = [];
  const polled = await store.listTasks(scope, { limit: 100 });
  const ids = polled.tasks.map((task) => task.id);
  let next = 0;
  list.push({
    name: 'poll: getTask with its scope',
    run: async () => {
      const id = ids[next++ % ids.length] as string;
      if (!(await store.getTask(id, scope))) throw new Error(`task ${id} not found`);
    },
  });
  for (const [label, filter] of filters) {
    const matching = await probe.count(scope, filter);
    const depth = Math.floor(matching * 0.9);
    const after = await probe.cursorAt(scope, filter, depth - 1);
    const expected = await probe.cursorAt(scope, filter, depth);
    const deep = await store.listTasks(scope, { ...filter, limit: PAGE, after });
    if (deep.tasks.length !== PAGE || deep.tasks[0]?.id !== expected.id) {
      throw new Error(`the deep page${label} starts at ${deep.tasks[0]?.id}, not ${expected.id}`);
    }
    list.push(
      { name: `first page${label}`, run: () => store.listTasks(scope, { ...filter, limit: PAGE }) },
      {
        name: `90 % deep page${label} (${depth} of ${matching})`,
        run: () => store.listTasks(scope, { ...filter, limit: PAGE, after }),
      },
    );
  }
  list.push({
    name: 'first page, status=pending',
    run: () => store.listTasks(scope, { status: 'pending', limit: PAGE }),
  });
  return list;
}

async function measure(storeName: string, store: Store, probe: Probe, scope: TaskScope): Promise<string[][]> {
  const list = await cases(store, probe, scope);
  const times = list.map((): number[] => []);
  for (let round = 0; round < WARMUP + SAMPLES; round++) {
    for (const [i, item] of list.entries()) {
      const started = performance.now();
      await item.run();
      if (round >= WARMUP) times[i]?.push(performance.now() - started);
    }
  }
  const stats = times.map((samples) => {
    const sorted = samples.sort((a, b) => a - b);
    return { p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
  });
  const floor = stats[list.findIndex((item) => item.name === 'first page')];
  if (!floor) throw new Error('no first page measured');
  const ms = (value: number) => `${value < 1 ? value.toFixed(3) : value.toFixed(2)} ms`;
  return list.map((item, i) => {
    const { p50, p99 } = stats[i] ?? { p50: Number.NaN, p99: Number.NaN };
    return [
      storeName,
      item.name,
      `${ms(p50)} / ${ms(p99)}`,
      `${ms(floor.p50)} / ${ms(floor.p99)}`,
      `${(p50 / floor.p50).toFixed(2)} / ${(p99 / floor.p99).toFixed(2)}`,
    ];
  });
}

function seconds(since: number): string {
  return `${((performance.now() - since) / 1000).toFixed(1)} s`;
}

async function onSqlite(): Promise<string[][]> {
  const dir = await mkdtemp(join(tmpdir(), 'videogen-scale-'));
  const path = join(dir, 'videogen.db');
  try {
    const setup = new SqliteStore({ path });
    await setup.migrate();
    const accounts: string[] = [];
    for (const _ of ACCOUNT_WEIGHTS) accounts.push((await setup.createAccount()).id);
    await setup.close();
    const started = performance.now();
    fillSqlite(path, accounts);
    console.error(`SQLite: ${TASKS} tasks loaded in ${seconds(started)}`);
    const store = new SqliteStore({ path });
    const probe = sqliteProbe(path);
    try {
      return await measure('SQLite', store, probe, {
        accountId: accounts[0] as string,
        environment: 'production',
      });
    } finally {
      probe.close();
      await store.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function onPostgres(): Promise<string[][]> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    console.error(`PostgreSQL skipped: ${DATABASE_URL} is unreachable (${(error as Error).message})`);
    return [];
  }
  const schema = `vg_bench_scale_${process.pid}`;
  const store = new PgStore({ connectionString: DATABASE_URL, schema, poolSize: 2 });
  try {
    await store.migrate();
    const accounts: string[] = [];
    for (const _ of ACCOUNT_WEIGHTS) accounts.push((await store.createAccount()).id);
    const started = performance.now();
    await fillPg(client, schema, accounts);
    console.error(`PostgreSQL: ${TASKS} tasks loaded in ${seconds(started)}`);
    return await measure('PostgreSQL', store, pgProbe(client, schema), {
      accountId: accounts[0] as string,
      environment: 'production',
    });
  } finally {
    await store.close();
    // The stores' migration lock: another store's migration introspects every schema (see freshSchemas).
    await client.query('select pg_advisory_lock($1::bigint)', [MIGRATION_LOCK_KEY]);
    await client.query(`drop schema if exists ${quoteIdentifier(schema)} cascade`);
    await client.query('select pg_advisory_unlock($1::bigint)', [MIGRATION_LOCK_KEY]);
    await client.end();
  }
}

const rows = [
  ...(STORES.has('sqlite') ? await onSqlite() : []),
  ...(STORES.has('postgres') ? await onPostgres() : []),
];
console.log(`\n${TASKS} tasks, ${PAGE} a page, ${SAMPLES} samples each\n`);
console.log('| store | query | measured p50 / p99 | first page p50 / p99 (same run) | ratio p50 / p99 |');
console.log('|---|---|---|---|---|');
for (const row of rows) console.log(`| ${row.join(' | ')} |`);

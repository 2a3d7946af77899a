/**
 * Where one dispatch's time goes (issue 18's "dispatch, create → processing"), phase by phase: the whole service
 * as `serve` runs it (role `all`, 4 worker slots, an engine that renders nothing), one
 * `POST /v1/videos/generations` at a time, 20 ms apart. Each job is timestamped when undici sends its headers, when
 * the server's `request` event fires and its response finishes (Node.js's and undici's diagnostics channels), when
 * the store's `createTask` and `claimTask` are called and return (the first claim that returns the job's task), and
 * when the engine is handed the task. Prints the p50 of each phase over `BENCH_PHASE_JOBS` jobs (default 250)
 * after 50 of warm-up, on SQLite, then on PostgreSQL (VIDEOGEN_BENCH_DATABASE_URL, default
 * postgres://postgres@127.0.0.1:5432/test, in a fresh schema dropped afterwards; skipped with a message when it
 * is unreachable). A diagnostic, not a target: `bench/queue-comparison/queues.ts` measures dispatch itself.
 * Run with `node packages/server/dist/bench/dispatch-phases.js` after `npm run build`.
 */
import { subscribe } from 'node:diagnostics_channel';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { Agent, request } from 'undici';
import { createApiKey } from '../src/accounts/api-keys.js';
import { loadConfig } from '../src/config.js';
import type { Engine, RenderJob } from '../src/ports/engine.js';
import { startService } from '../src/service.js';
import { quoteIdentifier } from '../src/store/pg/pg-database.js';
import { percentile } from './percentile.js';

const DATABASE_URL = process.env.VIDEOGEN_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const JOBS = Number(process.env.BENCH_PHASE_JOBS ?? 250);
const WARM_UP = 50;

type Mark =
  | 'send'
  | 'sent'
  | 'server'
  | 'created>'
  | 'created<'
  | 'claimed>'
  | 'claimed<'
  | 'engine'
  | 'finish';

const PHASES: readonly (readonly [string, Mark, Mark])[] = [
  ['client: send → headers sent', 'send', 'sent'],
  ['headers sent → server `request` event', 'sent', 'server'],
  ['routing, authentication, validation → `createTask`', 'server', 'created>'],
  ['`createTask`', 'created>', 'created<'],
  ['created → `claimTask` called', 'created<', 'claimed>'],
  ['`claimTask`', 'claimed>', 'claimed<'],
  ['claimed → engine', 'claimed<', 'engine'],
  ['dispatch: send → engine', 'send', 'engine'],
  ['created → response finished', 'created<', 'finish'],
];

/** The marks of the job in flight; one job at a time, so the first of each mark is the job's. */
let marks = new Map<Mark, number>();
const mark = (name: Mark, at = performance.now()): void => {
  if (!marks.has(name)) marks.set(name, at);
};

class InstantEngine implements Engine {
  readonly name = 'instant';
  #started: () => void = () => undefined;
  async check(): Promise<void> {}
  async render(job: RenderJob): Promise<void> {
    mark('engine');
    this.#started();
    await writeFile(job.outputPath, 'not a video');
  }
  nextStart(): Promise<void> {
    return new Promise((resolve) => {
      this.#started = resolve;
    });
  }
}

subscribe('undici:client:sendHeaders', () => mark('sent'));
subscribe('http.server.request.start', () => mark('server'));
subscribe('http.server.response.finish', () => mark('finish'));

async function phases(env: Record<string, string>): Promise<Map<string, number>> {
  const dataDir = await mkdtemp(join(tmpdir(), 'videogen-bench-phases-'));
  const engine = new InstantEngine();
  try {
    const service = await startService(
      loadConfig({
        VIDEOGEN_DATA_DIR: dataDir,
        VIDEOGEN_HOST: '127.0.0.1',
        VIDEOGEN_PORT: '0',
        VIDEOGEN_WORKER_CONCURRENCY: '4',
        VIDEOGEN_RATE_LIMIT_PER_MINUTE: '1000000000',
        ...env,
      }),
      pino({ level: 'silent' }),
      { engine },
    );
    const agent = new Agent();
    try {
      const { store } = service;
      const createTask = store.createTask.bind(store);
      store.createTask = async (task) => {
        const called = performance.now();
        const created = await createTask(task);
        mark('created>', called);
        mark('created<');
        return created;
      };
      const claimTask = store.claimTask.bind(store);
      store.claimTask = async (options) => {
        const called = performance.now();
        const claimed = await claimTask(options);
        if (claimed) {
          mark('claimed>', called);
          mark('claimed<');
        }
        return claimed;
      };
      const { key } = await createApiKey(store, { name: 'bench', environment: 'development' });
      const samples = new Map<string, number[]>(PHASES.map(([name]) => [name, []]));
      for (let job = 0; job < WARM_UP + JOBS; job++) {
        marks = new Map();
        const started = engine.nextStart();
        mark('send');
        const answered = request(`${service.publicUrl}/v1/videos/generations`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'videogen-2.0-fast-text-to-video', prompt: `job ${job}` }),
          dispatcher: agent,
        }).then(async (response) => {
          const text = await response.body.text();
          if (response.statusCode !== 200) throw new Error(`creation: ${response.statusCode} ${text}`);
        });
        await Promise.all([answered, started]);
        // The response may finish after the engine has started.
        while (!marks.has('finish')) await new Promise((resolve) => setImmediate(resolve));
        if (job >= WARM_UP) {
          for (const [name, from, to] of PHASES) {
            const [start, end] = [marks.get(from), marks.get(to)];
            if (start === undefined || end === undefined) throw new Error(`job ${job}: no ${from} or ${to}`);
            samples.get(name)?.push(end - start);
          }
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return new Map(
        [...samples].map(([name, values]) => [
          name,
          percentile(
            values.sort((a, b) => a - b),
            50,
          ),
        ]),
      );
    } finally {
      await agent.close();
      await service.close();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function onPostgres(): Promise<Map<string, number> | undefined> {
  const schema = `vg_bench_phases_${process.pid}`;
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  try {
    await admin.connect();
  } catch (error) {
    console.error(`PostgreSQL: skipped (${error instanceof Error ? error.message : String(error)})`);
    return undefined;
  }
  try {
    return await phases({ VIDEOGEN_DATABASE_URL: DATABASE_URL, VIDEOGEN_DATABASE_SCHEMA: schema });
  } finally {
    await admin.query(`drop schema if exists ${quoteIdentifier(schema)} cascade`);
    await admin.end();
  }
}

const sqlite = await phases({});
const postgres = await onPostgres();
console.log(`p50 of ${JOBS} jobs, one at a time, 20 ms apart, after ${WARM_UP} of warm-up`);
console.log('| phase | SQLite | PostgreSQL |');
console.log('|---|---|---|');
const ms = (value: number | undefined): string => (value === undefined ? '' : `${value.toFixed(2)} ms`);
for (const [name] of PHASES)
  console.log(`| ${name} | ${ms(sqlite.get(name))} | ${ms(postgres?.get(name))} |`);

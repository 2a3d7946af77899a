/**
 * What a task's creation costs the SQLite store alone, beside its floor (a diagnostic of issue 18's creation row,
 * whose HTTP figure is hot-paths.ts's): `SqliteStore.createTask` called 20 at a time, as 20 concurrent requests
 * reach it (one group commit, group-commit.ts), against the same statements (the account's and key's limits, the
 * usage record, the task's row) run straight on better-sqlite3, 20 in one transaction, without Kysely, promises
 * or savepoints. Each run fills a fresh file (WAL, the store's pragmas) with `BENCH_STORE_TASKS` tasks (default
 * 20 000) after 2000 of warm-up; the store and its floor alternate, `BENCH_STORE_RUNS` times each (default 4).
 * Prints CPU time per creation (user + system, this process) and the system share, medians over the runs.
 * Run with `node packages/server/dist/bench/store-creation.js` after `npm run build`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseGenerationRequest } from '../src/domain/generation-request.js';
import { newTaskId } from '../src/domain/identifiers.js';
import type { NewTask } from '../src/ports/store.js';
import { TASK_COLUMN_NAMES } from '../src/store/operations/create-task.js';
import { USAGE_COLUMNS } from '../src/store/operations/reserve-usage.js';
import { TEMP_STORE } from '../src/store/sqlite/sqlite-database.js';
import { openDatabase, pragma } from '../src/store/sqlite/sqlite-handles.js';
import { limitPageCache } from '../src/store/sqlite/sqlite-page-cache.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { toTaskRow, toUsageRow } from '../src/store/task-row.js';

const TASKS = Number(process.env.BENCH_STORE_TASKS ?? 20_000);
const RUNS = Number(process.env.BENCH_STORE_RUNS ?? 4);
const WARM_UP = 2000;
const GROUP = 20;

// A fast text task as the API makes it from the smallest request.
const { params: PARAMS } = parseGenerationRequest({
  model: 'videogen-2.0-fast-text-to-video',
  prompt: 'a red kite over green hills at sunset, cinematic',
});

interface Cost {
  readonly cpuMicros: number;
  readonly systemMicros: number;
}

/** CPU per creation of `create` called `count` times, `GROUP` at a time, after the warm-up. */
async function measure(
  create: (tasks: readonly NewTask[]) => Promise<unknown>,
  accountId: string,
): Promise<Cost> {
  const groups = async (count: number) => {
    for (let done = 0; done < count; done += GROUP) {
      const tasks = Array.from(
        { length: GROUP },
        (): NewTask => ({
          accountId,
          environment: 'development',
          id: newTaskId(),
          model: 'videogen-2.0-fast-text-to-video',
          params: PARAMS,
        }),
      );
      await create(tasks);
    }
  };
  await groups(WARM_UP);
  const before = process.cpuUsage();
  await groups(TASKS);
  const used = process.cpuUsage(before);
  return { cpuMicros: (used.user + used.system) / TASKS, systemMicros: used.system / TASKS };
}

async function throughStore(path: string): Promise<Cost> {
  const store = new SqliteStore({ path });
  try {
    await store.migrate();
    const account = await store.createAccount();
    return await measure((tasks) => Promise.all(tasks.map((task) => store.createTask(task))), account.id);
  } finally {
    await store.close();
  }
}

async function straight(path: string): Promise<Cost> {
  // The schema and the account as the store makes them; then the file as the store opens it.
  const store = new SqliteStore({ path });
  await store.migrate();
  const account = await store.createAccount();
  await store.close();
  const database = openDatabase(path);
  try {
    pragma(database, 'synchronous = NORMAL');
    limitPageCache(database);
    pragma(database, `temp_store = ${TEMP_STORE}`);
    const limits = database.prepare(
      `select accounts.monthly_video_seconds, accounts.monthly_budget, api_keys.monthly_video_seconds,
       api_keys.monthly_budget from accounts left join api_keys on api_keys.id = ? where accounts.id = ?`,
    );
    const insertInto = (table: string, columns: readonly string[]) =>
      database.prepare(
        `insert into ${table} (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')})`,
      );
    const usageColumns = Object.keys(USAGE_COLUMNS) as (keyof typeof USAGE_COLUMNS)[];
    const insertUsage = insertInto('usage_records', usageColumns);
    const insertTask = insertInto('tasks', TASK_COLUMN_NAMES);
    const createAll = database.transaction((tasks: readonly NewTask[]) => {
      const now = Date.now();
      for (const task of tasks) {
        limits.get(task.apiKeyId ?? null, task.accountId);
        const usage = toUsageRow(task, now);
        insertUsage.run(usageColumns.map((column) => usage[column]));
        const row = toTaskRow(task, now);
        insertTask.run(TASK_COLUMN_NAMES.map((column) => row[column]));
      }
    });
    return await measure(async (tasks) => createAll(tasks), account.id);
  } finally {
    database.close();
  }
}

const median = (values: readonly number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'videogen-bench-store-creation-'));
  try {
    const store: Cost[] = [];
    const floor: Cost[] = [];
    for (let run = 0; run < RUNS; run++) {
      store.push(await throughStore(join(dir, `store-${run}.db`)));
      floor.push(await straight(join(dir, `floor-${run}.db`)));
    }
    const cpu = (costs: readonly Cost[]) => median(costs.map((cost) => cost.cpuMicros));
    const system = (costs: readonly Cost[]) => median(costs.map((cost) => cost.systemMicros));
    console.log(
      `${TASKS} creations ${GROUP} at a time after ${WARM_UP} of warm-up, median of ${RUNS} alternating runs`,
    );
    console.log(
      '| benchmark | CPU per creation | of which system | floor (same run) | floor system | ratio |',
    );
    console.log('|---|---|---|---|---|---|');
    console.log(
      `| SQLite store: createTask | ${cpu(store).toFixed(1)} µs | ${system(store).toFixed(1)} µs | ` +
        `same statements on better-sqlite3 ${cpu(floor).toFixed(1)} µs | ${system(floor).toFixed(1)} µs | ` +
        `${(cpu(store) / cpu(floor)).toFixed(2)} |`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();

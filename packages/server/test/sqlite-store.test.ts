import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { newTaskId } from '../src/domain/identifiers.js';
import type { NewTask } from '../src/ports/store.js';
import { MIGRATIONS } from '../src/store/migrations/index.js';
import { openDatabase, pragma, prepare } from '../src/store/sqlite/sqlite-handles.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { addTextTasks, CIRCUIT_POLICY, engineOfNextClaim } from './helpers/circuit-routing.js';
import { generationParams } from './helpers/generation-params.js';
import { compiledPage, plannedPages } from './helpers/task-list-plans.js';
import { until } from './helpers/until.js';
import { storeConformance } from './store-conformance.js';

const run = promisify(execFile);
const STORE_MODULE = new URL('../src/store/sqlite/sqlite-store.js', import.meta.url).href;

/** What a racing process runs first: it says it is ready, then waits for the word to go. */
const READY_THEN_GO = `
  process.stderr.write('ready\\n');
  await new Promise((resolve) => process.stdin.once('data', resolve));
`;

/**
 * Runs `count` Node processes of `script` (which starts with READY_THEN_GO) and lets them go together once
 * every one is ready, however long each took to start: their work overlaps on any machine.
 */
async function race(count: number, script: string): Promise<{ stdout: string; stderr: string }[]> {
  const processes = Array.from({ length: count }, () =>
    run(process.execPath, ['--input-type=module', '--eval', script]),
  );
  const ready = processes.map(
    ({ child }) =>
      new Promise<void>((resolve, reject) => {
        let err = '';
        child.stderr?.on('data', (chunk: Buffer) => {
          err += chunk.toString();
          if (err.includes('ready\n')) resolve();
        });
        child.once('exit', (code) => reject(new Error(`exited with ${code} before it was ready: ${err}`)));
      }),
  );
  try {
    await Promise.all(ready);
  } catch (error) {
    // The others would wait for the word to go for ever, and hold this file's process open with them.
    for (const { child } of processes) child.kill();
    await Promise.allSettled(processes);
    throw error;
  }
  for (const { child } of processes) child.stdin?.end('go\n');
  return Promise.all(processes);
}

const PARAMS = generationParams();

let dir: string;
let files = 0;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-sqlite-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A copy of the database file alone, as it would be read without its WAL. */
async function copyWithoutWal(path: string): Promise<string> {
  const copy = join(dir, `file-only-${++files}.db`);
  await copyFile(path, copy);
  return copy;
}

storeConformance(
  'SQLite in memory',
  async (clock) => new SqliteStore({ path: ':memory:', now: () => clock.now }),
);
storeConformance(
  'SQLite file',
  async (clock) => new SqliteStore({ path: join(dir, `conformance-${++files}.db`), now: () => clock.now }),
);

describe('SqliteStore', () => {
  it('checkpoints the WAL from its worker thread, without a commit reaching the automatic threshold', async () => {
    const path = join(dir, 'background-checkpoints.db');
    const store = new SqliteStore({ path, checkpointInBackground: true });
    try {
      await store.migrate();
      const account = await store.createAccount();
      const raw = openDatabase(path, { readonly: true });
      try {
        assert.equal(
          pragma(raw, 'wal_autocheckpoint', { simple: true }),
          1000,
          "another connection's default",
        );
        // The migrations and the account are far below 1000 pages: only the worker moves them into the file.
        // Read from the file alone (no WAL): once checkpointed, the account is there.
        await until(
          async () => {
            const fileOnly = openDatabase(await copyWithoutWal(path), { readonly: true });
            try {
              const found = prepare(fileOnly, 'select count(*) as n from accounts where id = ?').get(
                account.id,
              );
              return (found as { n: number } | undefined)?.n === 1;
            } catch {
              return false; // Not even the schema checkpointed yet.
            } finally {
              fileOnly.close();
            }
          },
          'the account checkpointed into the file',
          { intervalMs: 20 },
        );
      } finally {
        raw.close();
      }
    } finally {
      await store.close();
    }
  });

  it('leaves nothing of better-sqlite3 for the garbage collector: a process runs on after its stores closed', async () => {
    // On Node.js 24 a collected better-sqlite3 object aborts the process (sqlite-handles.ts). Every collection
    // here is a full one (--gc-global), started by the script's own allocations, and the new space is small, so
    // the stores' objects, young or old, and those of their checkpointer threads would all be collected.
    const script = `
      const { SqliteStore } = await import(${JSON.stringify(STORE_MODULE)});
      for (let round = 0; round < 3; round++) {
        const store = new SqliteStore({
          path: ${JSON.stringify(join(dir, 'collected'))} + round + '.db',
          checkpointInBackground: true,
        });
        await store.migrate();
        await store.createAccount();
        await store.close();
      }
      let garbage = [];
      for (let i = 0; i < 2_000_000; i++) {
        garbage.push({ i });
        if (garbage.length === 1000) garbage = [];
      }
      process.stdout.write('survived\\n');
    `;
    const { stdout } = await run(process.execPath, [
      '--gc-global',
      '--max-semi-space-size=1',
      '--input-type=module',
      '--eval',
      script,
    ]);
    assert.equal(stdout, 'survived\n');
  });

  it('creates the parent directory and uses WAL', async () => {
    const path = join(dir, 'nested', 'deeper', 'videogen.db');
    const store = new SqliteStore({ path });
    await store.migrate();
    await store.close();
    const raw = openDatabase(path, { readonly: true });
    try {
      assert.equal(pragma(raw, 'journal_mode', { simple: true }), 'wal');
    } finally {
      raw.close();
    }
  });

  it('claims by the circuits as another process left them: open at once, one trial for both', async () => {
    const path = join(dir, 'circuits.db');
    let now = 1_700_000_000_000;
    const a = new SqliteStore({ path, now: () => now });
    await a.migrate();
    const b = new SqliteStore({ path, now: () => now });
    try {
      await addTextTasks(a, 6, PARAMS);
      assert.equal(await engineOfNextClaim(a), 'ark');
      await b.recordEngineOutcome('ark', 'unavailable', CIRCUIT_POLICY);
      assert.equal(await engineOfNextClaim(b), 'gpu', 'the process that opened it, at once');
      // A claim on SQLite reads the circuits in its transaction: no cache to outlive.
      assert.equal(await engineOfNextClaim(a), 'gpu', 'the other process, at once');
      now += CIRCUIT_POLICY.cooldownMs - 1;
      assert.equal(await engineOfNextClaim(b), 'gpu', 'still open');
      now += 1;
      assert.equal(await engineOfNextClaim(a), 'ark', 'the trial');
      assert.equal(await engineOfNextClaim(b), 'gpu', 'the trial is taken: the next step');
    } finally {
      await b.close();
      await a.close();
    }
  });

  it('keeps data across close and reopen', async () => {
    const path = join(dir, 'reopen.db');
    const first = new SqliteStore({ path });
    await first.migrate();
    const account = await first.createAccount();
    const key = await first.createApiKey({
      accountId: account.id,
      name: 'k',
      environment: 'production',
      prefix: 'vg_prod_abcdef',
      hash: 'reopen-hash',
    });
    const task = await first.createTask({
      accountId: account.id,
      environment: 'production',
      id: newTaskId(),
      model: 'videogen-2.0-text-to-video',
      params: PARAMS,
    });
    const secret = await first.getOrCreateSecret('s', () => 'v1');
    await first.close();

    const second = new SqliteStore({ path });
    await second.migrate();
    assert.equal(await second.countAccounts(), 1);
    assert.deepEqual(await second.findActiveApiKey('reopen-hash'), key);
    assert.deepEqual(await second.getTask(task.id), task);
    assert.equal(await second.getOrCreateSecret('s', () => 'v2'), secret);
    await second.close();
  });

  it('reads a task on its own connection: a write committed elsewhere at once, never one not yet committed', async () => {
    const path = join(dir, 'reader.db');
    const store = new SqliteStore({ path });
    const writer = openDatabase(path);
    try {
      await store.migrate();
      const account = await store.createAccount();
      const scope = { accountId: account.id, environment: 'production' } as const;
      const task = await store.createTask({
        ...scope,
        id: newTaskId(),
        model: 'videogen-2.0-text-to-video',
        params: PARAMS,
      });
      pragma(writer, 'busy_timeout = 5000');
      prepare(writer, 'begin immediate').run();
      prepare(writer, "update tasks set status = 'processing', progress = 40 where id = ?").run(task.id);
      // Another connection's transaction is open, holding the write lock: the poll neither waits nor sees it.
      assert.equal((await store.getTask(task.id, scope))?.status, 'pending');
      prepare(writer, 'commit').run();
      const read = await store.getTask(task.id, scope);
      assert.deepEqual([read?.status, read?.progress], ['processing', 40]);
      assert.equal(await store.getTask(task.id, { ...scope, environment: 'development' }), undefined);
    } finally {
      writer.close();
      await store.close();
    }
  });

  it('creations made together commit together; one that fails is rolled back alone, its usage too', async () => {
    const store = new SqliteStore({ path: join(dir, 'group-commit.db') });
    try {
      await store.migrate();
      const account = await store.createAccount();
      const scope = { accountId: account.id, environment: 'production' } as const;
      const newTask = (id = newTaskId()): NewTask => ({
        ...scope,
        id,
        model: 'videogen-2.0-text-to-video',
        params: PARAMS,
      });
      // A failed task keeps its row and loses its usage record: creating its id again reserves usage first and
      // then fails on the task's primary key, after its group's earlier creations wrote theirs.
      const failed = await store.createTask(newTask());
      const claim = await store.claimTask({ workerId: 'w', leaseMs: 60_000, maxAttempts: 1 });
      assert.equal(claim?.id, failed.id);
      assert.ok(
        await store.failTask(
          { taskId: failed.id, attempt: 1, workerId: 'w' },
          { code: 'generation_failed', message: 'no' },
        ),
      );

      const outcomes = await Promise.allSettled([
        store.createTask(newTask()),
        store.createTask(newTask(failed.id)),
        store.createTask(newTask()),
      ]);
      assert.deepEqual(
        outcomes.map((outcome) => outcome.status),
        ['fulfilled', 'rejected', 'fulfilled'],
      );
      for (const outcome of outcomes) {
        if (outcome.status === 'fulfilled')
          assert.equal((await store.getTask(outcome.value.id))?.status, 'pending');
      }
      assert.equal((await store.getTask(failed.id))?.status, 'failed');
      const usage = await store.listUsage(account.id, {
        start: 0,
        end: Number.MAX_SAFE_INTEGER,
        groupBy: 'model',
      });
      assert.deepEqual(
        usage.map((sum) => [sum.state, sum.tasks]),
        [['reserved', 2]],
      );
    } finally {
      await store.close();
    }
  });

  it('gives the query planner statistics: tasks written by another connection are analysed when the store opens', async () => {
    const path = join(dir, 'statistics.db');
    const first = new SqliteStore({ path });
    await first.migrate();
    const account = await first.createAccount();
    await first.close();
    const raw = openDatabase(path);
    const statRows = () =>
      (
        prepare(raw, "select count(*) as count from sqlite_stat1 where tbl = 'tasks'").get() as {
          count: number;
        }
      ).count;
    try {
      const insert = prepare(
        raw,
        `insert into tasks (id, account_id, environment, model, status, progress, params, attempts, created_at,
           updated_at) values (?, ?, 'production', 'videogen-2.0-text-to-video', 'completed', 100, '{}', 0, ?, ?)`,
      );
      raw.transaction(() => {
        for (let i = 0; i < 500; i++) insert.run(newTaskId(), account.id, i, i);
      })();
      assert.equal(statRows(), 0);
      const second = new SqliteStore({ path });
      try {
        // One row for each index of the table.
        assert.ok(statRows() > 0);
      } finally {
        await second.close();
      }
    } finally {
      raw.close();
    }
  });

  it('enforces foreign keys', async () => {
    const store = new SqliteStore({ path: ':memory:' });
    await store.migrate();
    await assert.rejects(
      store.createApiKey({
        accountId: 'acct_missing',
        name: 'k',
        environment: 'development',
        prefix: 'p',
        hash: 'h',
      }),
    );
    await store.close();
  });

  it('lets several processes migrate a new file at once', async () => {
    const path = join(dir, 'racing.db');
    // Every process is let go at once, so their migrations overlap.
    const script = `
      const { SqliteStore } = await import(${JSON.stringify(STORE_MODULE)});
      const store = new SqliteStore({ path: ${JSON.stringify(path)} });
      ${READY_THEN_GO}
      await store.migrate();
      await store.createAccount();
      await store.close();
    `;
    await race(4, script);
    const store = new SqliteStore({ path });
    await store.migrate();
    assert.equal(await store.countAccounts(), 4);
    await store.close();
    const raw = openDatabase(path, { readonly: true });
    try {
      assert.deepEqual(
        prepare(raw, 'select name from kysely_migration order by name').pluck().all(),
        Object.keys(MIGRATIONS).sort(),
      );
    } finally {
      raw.close();
    }
  });

  it('reads every page of GET /v1/tasks as one index range in order, however deep', async () => {
    const path = join(dir, 'plans.db');
    const store = new SqliteStore({ path });
    await store.migrate();
    await store.close();
    const raw = openDatabase(path, { readonly: true });
    try {
      for (const { name, query } of plannedPages()) {
        const { sql, parameters } = compiledPage(
          'sqlite',
          { accountId: 'acct_a', environment: 'production' },
          query,
        );
        const plan = (prepare(raw, `explain query plan ${sql}`).all(parameters) as { detail: string }[]).map(
          (row) => row.detail,
        );
        assert.equal(plan.length, 1, `${name}: ${plan.join('; ')}`);
        const [scan] = plan;
        // Without statistics (videogen never runs ANALYZE), a status, a model and both ends of a creation range
        // leave SQLite estimating about one row either way, and it takes the narrower claiming index
        // (status, created_at, id): still one range in order, bounded by the cursor and the creation range.
        const bothEnds =
          query.createdAfter !== undefined && (query.after || query.createdBefore !== undefined);
        const index =
          query.status && query.model
            ? bothEnds
              ? 'tasks_claim'
              : 'tasks_list_status_model'
            : query.status
              ? 'tasks_list_status'
              : query.model
                ? 'tasks_list_model'
                : 'tasks_list';
        assert.match(
          scan ?? '',
          new RegExp(`^SEARCH tasks USING INDEX ${index} \\((account_id=\\? AND environment=\\?|status=\\?)`),
          name,
        );
        if (query.after)
          assert.match(scan ?? '', /\(created_at,id\)<\(\?,\?\)/, `${name}: the cursor bounds the range`);
      }
    } finally {
      raw.close();
    }
  });

  it('creates budget-limited tasks from several processes sharing a file without a busy error', async () => {
    const path = join(dir, 'shared-budgets.db');
    const store = new SqliteStore({ path });
    let accountId: string;
    try {
      await store.migrate();
      accountId = (await store.createAccount()).id;
      // A limit far above what the processes create: each creation reads the account's usage, then writes.
      await store.setAccountLimits(accountId, { monthlyVideoSeconds: 1_000_000, monthlyBudgetMicros: null });
    } finally {
      await store.close();
    }
    const script = `
      const { SqliteStore } = await import(${JSON.stringify(STORE_MODULE)});
      const { newTaskId } = await import(${JSON.stringify(new URL('../src/domain/identifiers.js', import.meta.url).href)});
      const store = new SqliteStore({ path: ${JSON.stringify(path)} });
      const errors = [];
      let created = 0;
      ${READY_THEN_GO}
      for (let round = 0; round < 30; round++) {
        const outcomes = await Promise.allSettled(Array.from({ length: 10 }, () => store.createTask({
          accountId: ${JSON.stringify(accountId)}, environment: 'production', id: newTaskId(),
          model: 'videogen-2.0-text-to-video', params: ${JSON.stringify(PARAMS)},
        })));
        for (const outcome of outcomes) {
          if (outcome.status === 'fulfilled') created++;
          else errors.push(String(outcome.reason.code) + ': ' + outcome.reason.message);
        }
      }
      await store.close();
      process.stdout.write(JSON.stringify({ created, errors }));
    `;
    const outputs = (await race(3, script)).map(
      ({ stdout }) => JSON.parse(stdout) as { created: number; errors: string[] },
    );
    assert.deepEqual(
      outputs.flatMap((output) => output.errors),
      [],
    );
    assert.deepEqual(
      outputs.map((output) => output.created),
      [300, 300, 300],
    );
  });

  it('never hands one task to two processes sharing a file', async () => {
    const path = join(dir, 'shared.db');
    const store = new SqliteStore({ path });
    const ids = new Set<string>();
    try {
      await store.migrate();
      const account = await store.createAccount();
      for (let i = 0; i < 12; i++) {
        const task = await store.createTask({
          accountId: account.id,
          environment: 'development',
          id: newTaskId(),
          model: 'videogen-2.0-text-to-video',
          params: PARAMS,
        });
        ids.add(task.id);
      }
    } finally {
      await store.close();
    }
    // Separate processes, as in production: a store's busy wait blocks its own event loop, so stores sharing
    // a file inside one process are not a configuration videogen runs.
    const script = `
      const { SqliteStore } = await import(${JSON.stringify(STORE_MODULE)});
      const store = new SqliteStore({ path: ${JSON.stringify(path)} });
      const claimed = [];
      ${READY_THEN_GO}
      for (let task; (task = await store.claimTask({ workerId: 'w-' + process.pid, leaseMs: 60000, maxAttempts: 3 })); ) {
        claimed.push(task.id);
      }
      await store.close();
      process.stdout.write(JSON.stringify(claimed));
    `;
    const outputs = await race(3, script);
    const claimed = outputs.flatMap(({ stdout }) => JSON.parse(stdout) as string[]);
    assert.equal(claimed.length, 12);
    assert.deepEqual(new Set(claimed), ids);
  });
});

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import BetterSqlite3 from 'better-sqlite3';
import { newTaskId } from '../src/domain/identifiers.js';
import type { TaskRecord } from '../src/domain/task.js';
import { SqliteStore } from '../src/store/sqlite-store.js';
import { storeConformance } from './store-conformance.js';

const run = promisify(execFile);
const STORE_MODULE = new URL('../src/store/sqlite-store.js', import.meta.url).href;

const PARAMS = {
  prompt: 'p',
  image_urls: [],
  video_urls: [],
  audio_urls: [],
  duration: 5,
  quality: '720p',
  aspect_ratio: '16:9',
  seed: 7,
  callback_url: null,
} as const;

let dir: string;
let files = 0;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-sqlite-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

storeConformance(
  'SQLite in memory',
  async (clock) => new SqliteStore({ path: ':memory:', now: () => clock.now }),
);
storeConformance(
  'SQLite file',
  async (clock) => new SqliteStore({ path: join(dir, `conformance-${++files}.db`), now: () => clock.now }),
);

describe('SqliteStore', () => {
  it('creates the parent directory and uses WAL', async () => {
    const path = join(dir, 'nested', 'deeper', 'videogen.db');
    const store = new SqliteStore({ path });
    await store.migrate();
    await store.close();
    const raw = new BetterSqlite3(path, { readonly: true });
    try {
      assert.equal(raw.pragma('journal_mode', { simple: true }), 'wal');
    } finally {
      raw.close();
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
    // Every process spins until the same instant, so their migrations overlap.
    const startAt = Date.now() + 1500;
    const script = `
      const { SqliteStore } = await import(${JSON.stringify(STORE_MODULE)});
      const store = new SqliteStore({ path: ${JSON.stringify(path)} });
      while (Date.now() < ${startAt});
      await store.migrate();
      await store.createAccount();
      await store.close();
    `;
    const processes = Array.from({ length: 4 }, () =>
      run(process.execPath, ['--input-type=module', '--eval', script]),
    );
    await Promise.all(processes);
    const store = new SqliteStore({ path });
    await store.migrate();
    assert.equal(await store.countAccounts(), 4);
    await store.close();
    const raw = new BetterSqlite3(path, { readonly: true });
    try {
      assert.deepEqual(raw.prepare('select name from kysely_migration').pluck().all(), ['0001-initial']);
    } finally {
      raw.close();
    }
  });

  it('never hands one task to two stores sharing a file', async () => {
    const path = join(dir, 'shared.db');
    const stores = [new SqliteStore({ path }), new SqliteStore({ path }), new SqliteStore({ path })];
    try {
      for (const store of stores) await store.migrate();
      const [first] = stores;
      assert.ok(first);
      const account = await first.createAccount();
      const ids = new Set<string>();
      for (let i = 0; i < 12; i++) {
        const task = await first.createTask({
          accountId: account.id,
          environment: 'development',
          id: newTaskId(),
          model: 'videogen-2.0-text-to-video',
          params: PARAMS,
        });
        ids.add(task.id);
      }
      const claims: Promise<TaskRecord | undefined>[] = [];
      for (let round = 0; round < 6; round++) {
        for (const [index, store] of stores.entries()) {
          claims.push(store.claimTask({ workerId: `w-${index}`, leaseMs: 60_000, maxAttempts: 3 }));
        }
      }
      const claimed = (await Promise.all(claims)).flatMap((task) => (task ? [task.id] : []));
      assert.equal(claimed.length, 12);
      assert.deepEqual(new Set(claimed), ids);
    } finally {
      for (const store of stores) await store.close();
    }
  });
});

import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { newTaskId } from '../src/domain/identifiers.js';
import { SqliteStore } from '../src/store/sqlite-store.js';
import { storeConformance } from './store-conformance.js';

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
      params: {
        prompt: 'p',
        image_urls: [],
        video_urls: [],
        audio_urls: [],
        duration: 5,
        quality: '720p',
        aspect_ratio: '16:9',
        seed: 7,
        callback_url: null,
      },
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
});

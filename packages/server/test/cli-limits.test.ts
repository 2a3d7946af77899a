/** `videogen keys create --monthly-…`, `keys limits` and `accounts limits`: monthly limits from the command line. */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { runCli, serverEnv } from './helpers/server-process.js';

let dataDir: string;
before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'videogen-cli-limits-'));
});
after(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

async function readStore<T>(read: (store: SqliteStore) => Promise<T>): Promise<T> {
  const store = new SqliteStore({ path: join(dataDir, 'videogen.db') });
  try {
    return await read(store);
  } finally {
    await store.close();
  }
}

describe('limits on the command line', () => {
  it('keys create takes the limits; keys limits changes one, clears one with none, and keeps the other', async () => {
    const env = serverEnv(dataDir);
    const created = await runCli(
      ['keys', 'create', '--name', 'ci', '--monthly-video-seconds', '600', '--monthly-budget', '25.5'],
      env,
    );
    assert.equal(created.code, 0, created.stderr);
    const [key] = await readStore((store) => store.listApiKeys());
    assert.ok(key);
    assert.deepEqual(key.limits, { monthlyVideoSeconds: 600, monthlyBudgetMicros: 25_500_000 });

    const changed = await runCli(['keys', 'limits', key.prefix, '--monthly-video-seconds', 'none'], env);
    assert.equal(changed.code, 0, changed.stderr);
    assert.equal(changed.stdout, `${key.prefix}: budget 25.5/month\n`);
    const listed = await runCli(['keys', 'list'], env);
    assert.match(listed.stdout, /LIMITS/);
    assert.match(listed.stdout, /budget 25\.5\/month/);

    const bad = await runCli(['keys', 'limits', key.id, '--monthly-video-seconds', '1.5'], env);
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, /monthly_video_seconds must be a whole number/);
    const unknown = await runCli(['keys', 'limits', 'vg_nothing', '--monthly-budget', '1'], env);
    assert.equal(unknown.code, 1);
  });

  it('accounts limits sets and shows the account limits', async () => {
    const env = serverEnv(dataDir);
    const [key] = await readStore((store) => store.listApiKeys());
    assert.ok(key);
    const set = await runCli(
      ['accounts', 'limits', '--account', key.accountId, '--monthly-video-seconds', '3600'],
      env,
    );
    assert.equal(set.code, 0, set.stderr);
    assert.equal(set.stdout, `${key.accountId}: 3600 video s/month\n`);
    assert.deepEqual(await readStore((store) => store.getAccountLimits(key.accountId)), {
      monthlyVideoSeconds: 3600,
      monthlyBudgetMicros: null,
    });
    const shown = await runCli(['accounts', 'limits', '--account', key.accountId], env);
    assert.equal(shown.stdout, `${key.accountId}: 3600 video s/month\n`);
    const missing = await runCli(['accounts', 'limits', '--account', 'acct_none'], env);
    assert.equal(missing.code, 1);
  });
});

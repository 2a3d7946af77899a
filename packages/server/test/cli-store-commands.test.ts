/**
 * The store commands (`keys`, `webhooks`, `accounts reset-password`) read the server's store: run where there is
 * none, they refuse, naming the store they looked for, and create nothing (exit status 1). The commands that
 * create an account or a key may start a store, and say so.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { freshSchemas, postgresSuite, TEST_DATABASE_URL } from './helpers/postgres.js';
import { runCli, serverEnv } from './helpers/server-process.js';

const READING_COMMANDS = [
  ['webhooks', 'secret'],
  ['webhooks', 'rotate-secret'],
  ['webhooks', 'deliveries', 'task-unified-01JD7V3Q6M8Z5S9K2T4W6Y8A0C'],
  ['keys', 'list'],
  ['keys', 'revoke', 'vg_dev_AbC123'],
  ['accounts', 'reset-password', '--email', 'owner@example.com'],
];

const HINT = 'run the command where the server runs, with its VIDEOGEN_DATA_DIR (or VIDEOGEN_DATABASE_URL)';

describe('store commands without the server’s store', () => {
  let root: string;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'videogen-cli-store-'));
  });
  after(() => rm(root, { recursive: true, force: true }));

  for (const args of READING_COMMANDS) {
    it(`${args.slice(0, 2).join(' ')} refuses where there is no store, and creates none`, async () => {
      const dataDir = join(root, 'missing');
      const run = await runCli(args, serverEnv(dataDir));
      assert.equal(run.code, 1);
      assert.equal(run.stdout, '');
      assert.equal(run.stderr, `videogen: no store at ${join(dataDir, 'videogen.db')}; ${HINT}\n`);
      assert.ok(!existsSync(dataDir), 'no data directory was made');
    });
  }

  it('refuses a store that holds no account, and adds none', async () => {
    const dataDir = join(root, 'empty');
    const database = join(dataDir, 'videogen.db');
    const store = new SqliteStore({ path: database });
    await store.migrate();
    await store.close();
    const run = await runCli(['webhooks', 'secret'], serverEnv(dataDir));
    assert.equal(run.code, 1);
    assert.equal(run.stdout, '');
    assert.equal(
      run.stderr.split('\n').at(-2),
      `videogen: the store at ${database} holds no account yet; ${HINT}`,
    );
    const after = new SqliteStore({ path: database });
    try {
      assert.equal(await after.countAccounts(), 0);
    } finally {
      await after.close();
    }
  });

  it('keys create starts a store and says so; the store commands then read it', async () => {
    const dataDir = join(root, 'new');
    const database = join(dataDir, 'videogen.db');
    const created = await runCli(['keys', 'create', '--name', 'first'], serverEnv(dataDir));
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /^vg_dev_\w+\n$/);
    assert.equal(
      created.stderr,
      `videogen: the store at ${database} was new; if the server uses another, ${HINT}\n`,
    );

    const secret = await runCli(['webhooks', 'secret'], serverEnv(dataDir));
    assert.equal(secret.code, 0, secret.stderr);
    assert.match(secret.stdout, /^whsec_\S+\n$/);
    assert.equal(secret.stderr, '');
    const again = await runCli(['webhooks', 'secret'], serverEnv(dataDir));
    assert.equal(again.stdout, secret.stdout, 'the same account, not a new one each time');
  });
});

describe('store commands on a PostgreSQL database without videogen’s tables', await postgresSuite(), () => {
  const schema = freshSchemas();

  it('refuse, naming the database without its password, and create no tables', async () => {
    const name = schema();
    const url = new URL(TEST_DATABASE_URL);
    url.password = 'hunter2';
    const dataDir = join(tmpdir(), `videogen-unused-${name}`);
    const env = {
      ...serverEnv(dataDir),
      VIDEOGEN_DATABASE_URL: url.href,
      VIDEOGEN_DATABASE_SCHEMA: name,
    };
    const run = await runCli(['keys', 'list'], env);
    assert.equal(run.code, 1);
    assert.ok(!existsSync(dataDir), 'no data directory was made');
    assert.ok(!run.stderr.includes('hunter2'), run.stderr);
    url.password = '***';
    assert.ok(
      run.stderr.startsWith(`videogen: no videogen store at ${url.href} (schema ${name}) (`),
      run.stderr,
    );
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      const found = await client.query('select 1 from information_schema.schemata where schema_name = $1', [
        name,
      ]);
      assert.equal(found.rowCount, 0, 'nothing was created');
    } finally {
      await client.end();
    }
  });
});

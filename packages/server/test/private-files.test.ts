/**
 * The data directory and the SQLite store hold the webhook signing secrets: the server (and the CLI) create them
 * private to their user, 0700 and 0600 with the database's -wal and -shm files, and tighten looser existing
 * ones with a warning.
 */
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { startService } from '../src/service.js';
import { runCli, serverEnv } from './helpers/server-process.js';

async function modeOf(path: string): Promise<string> {
  return `0${((await stat(path)).mode & 0o777).toString(8)}`;
}

/** Starts the service on `dataDir`, runs `test` while it serves, and answers the warnings it logged. */
async function whileServing(dataDir: string, test: () => Promise<void>): Promise<string[]> {
  const warnings: string[] = [];
  const logger = pino(
    { level: 'warn' },
    { write: (line: string) => warnings.push((JSON.parse(line) as { msg: string }).msg) },
  );
  const config = loadConfig({
    VIDEOGEN_DATA_DIR: dataDir,
    VIDEOGEN_HOST: '127.0.0.1',
    VIDEOGEN_PORT: '0',
    VIDEOGEN_WORKER_CONCURRENCY: '0',
  });
  const service = await startService(config, logger);
  try {
    await test();
  } finally {
    await service.close();
  }
  return warnings;
}

describe('private data files', () => {
  let root: string;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'videogen-private-'));
  });
  after(() => rm(root, { recursive: true, force: true }));

  it('creates the data directory 0700 and the database, -wal and -shm 0600', async () => {
    const dataDir = join(root, 'fresh', 'data');
    const database = join(dataDir, 'videogen.db');
    const warnings = await whileServing(dataDir, async () => {
      assert.equal(await modeOf(dataDir), '0700');
      assert.equal(await modeOf(database), '0600');
      assert.equal(await modeOf(`${database}-wal`), '0600');
      assert.equal(await modeOf(`${database}-shm`), '0600');
    });
    assert.deepEqual(warnings, []);
  });

  it('tightens an existing data directory and database left open to others, with a warning each', async () => {
    const dataDir = join(root, 'loose');
    const database = join(dataDir, 'videogen.db');
    await whileServing(dataDir, async () => {});
    await chmod(dataDir, 0o755);
    await chmod(database, 0o644);
    // What an older version, stopped by SIGKILL, leaves beside the database.
    await writeFile(`${database}-wal`, '', { mode: 0o644 });
    await chmod(`${database}-wal`, 0o644);

    const warnings = await whileServing(dataDir, async () => {
      assert.equal(await modeOf(dataDir), '0700');
      assert.equal(await modeOf(database), '0600');
      assert.equal(await modeOf(`${database}-wal`), '0600');
      assert.equal(await modeOf(`${database}-shm`), '0600');
    });
    assert.deepEqual(warnings, [
      `${dataDir} was open to other users (0755); made it 0700: it holds videogen's secrets (webhook signing secrets, API key hashes)`,
      `${database} was open to other users (0644); made it 0600: it holds videogen's secrets (webhook signing secrets, API key hashes)`,
      `${database}-wal was open to other users (0644); made it 0600: it holds videogen's secrets (webhook signing secrets, API key hashes)`,
    ]);
  });

  it('the CLI creates them private too, and warns on stderr when it tightens', async () => {
    const dataDir = join(root, 'cli', 'data');
    const created = await runCli(['keys', 'create', '--name', 'ci'], serverEnv(dataDir));
    assert.equal(created.code, 0, created.stderr);
    assert.equal(await modeOf(dataDir), '0700');
    assert.equal(await modeOf(join(dataDir, 'videogen.db')), '0600');

    await chmod(dataDir, 0o750);
    const listed = await runCli(['keys', 'list'], serverEnv(dataDir));
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stderr, /^videogen: warning: .+ was open to other users \(0750\); made it 0700/);
    assert.equal(await modeOf(dataDir), '0700');
  });

  it('does not change a directory outside the data directory that holds the database', async () => {
    const shared = join(root, 'shared');
    await mkdir(shared, { mode: 0o755 });
    await chmod(shared, 0o755);
    const database = join(shared, 'store.db');
    const env = { ...serverEnv(join(root, 'unused')), VIDEOGEN_DATABASE_URL: database };
    const created = await runCli(['keys', 'create', '--name', 'ci'], env);
    assert.equal(created.code, 0, created.stderr);
    assert.equal(await modeOf(shared), '0755');
    assert.equal(await modeOf(database), '0600');
  });
});

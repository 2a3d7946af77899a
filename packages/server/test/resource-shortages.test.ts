/**
 * A store or storage that runs out of a resource (issue 33, items 18 and 19), with the failures injected as the
 * drivers throw them rather than by filling a disk: a database busy past its wait is `503 overloaded`, no space
 * left is `503 storage_full`, both with `Retry-After` and never a 500; a full disk names its cause in the log,
 * takes the process out of readiness, and fails a render with `storage_full`.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { pino } from 'pino';
import { createApiKey } from '../src/accounts/api-keys.js';
import { loadConfig } from '../src/config.js';
import { TaskFailure } from '../src/domain/errors.js';
import type { PublicTask } from '../src/domain/task.js';
import type { Engine } from '../src/ports/engine.js';
import type { Storage } from '../src/ports/storage.js';
import type { Store } from '../src/ports/store.js';
import { SpaceAlarm } from '../src/process/space-alarm.js';
import { type ServiceOptions, startService } from '../src/service.js';
import { Api, type ErrorBody } from './helpers/api.js';
import { until } from './helpers/until.js';

const TEXT = { model: 'videogen-2.0-text-to-video', prompt: 'a paper boat on a blue river' };
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** better-sqlite3's error when a write finds the disk full. */
const sqliteFull = () => new BetterSqlite3.SqliteError('database or disk is full', 'SQLITE_FULL');
/** better-sqlite3's error when another process held the write lock past `busy_timeout`. */
const sqliteBusy = () => new BetterSqlite3.SqliteError('database is locked', 'SQLITE_BUSY');
/** Node.js's error when a file write finds the disk full. */
const enospc = (syscall: string) =>
  Object.assign(new Error(`ENOSPC: no space left on device, ${syscall}`), {
    errno: -28,
    code: 'ENOSPC',
    syscall,
  });

/** `target`, with each method named in `faults` failing with the error its entry makes while it has one. */
function withFaults<T extends object>(target: T, faults: Map<string, () => Error>): T {
  return new Proxy(target, {
    get(object, name) {
      const fault = typeof name === 'string' ? faults.get(name) : undefined;
      if (fault) return async () => Promise.reject(fault());
      const value: unknown = Reflect.get(object, name, object);
      return typeof value === 'function' ? value.bind(object) : value;
    },
  });
}

interface Started {
  readonly api: Api;
  readonly url: string;
  readonly storeFaults: Map<string, () => Error>;
  readonly storageFaults: Map<string, () => Error>;
  /** The service's log, one parsed JSON line each. */
  readonly log: Record<string, unknown>[];
  readyz(): Promise<{ status: number; body: { status: string } }>;
  close(): Promise<void>;
}

async function start(env: Record<string, string> = {}, options: ServiceOptions = {}): Promise<Started> {
  const dataDir = await mkdtemp(join(tmpdir(), 'videogen-shortage-'));
  const storeFaults = new Map<string, () => Error>();
  const storageFaults = new Map<string, () => Error>();
  const log: Record<string, unknown>[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => log.push(JSON.parse(line)) });
  const service = await startService(
    loadConfig({
      VIDEOGEN_DATA_DIR: dataDir,
      VIDEOGEN_HOST: '127.0.0.1',
      VIDEOGEN_PORT: '0',
      VIDEOGEN_WORKER_CONCURRENCY: '0',
      ...env,
    }),
    logger,
    {
      ...options,
      wrapStore: (store: Store) => withFaults(store, storeFaults),
      wrapStorage: (storage: Storage) => withFaults(storage, storageFaults),
    },
  );
  const account = await service.store.createAccount();
  const { key } = await createApiKey(service.store, {
    name: 'test',
    environment: 'development',
    accountId: account.id,
  });
  return {
    api: new Api(service.publicUrl, key),
    url: service.publicUrl,
    storeFaults,
    storageFaults,
    log,
    async readyz() {
      const response = await fetch(`${service.publicUrl}/readyz`);
      return { status: response.status, body: (await response.json()) as { status: string } };
    },
    async close() {
      await service.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

function assertUnavailable(
  response: { status: number; headers: Headers; body: unknown },
  code: 'overloaded' | 'storage_full',
): void {
  const body = response.body as ErrorBody;
  assert.equal(response.status, 503, JSON.stringify(body));
  assert.equal(body.error.code, code);
  assert.equal(body.error.type, 'api_error');
  const retryAfter = Number(response.headers.get('retry-after'));
  assert.ok(Number.isInteger(retryAfter) && retryAfter > 0, `Retry-After ${retryAfter}`);
}

/** An engine that writes a few bytes as its video, or fails with `failure`. */
function engine(failure: (() => Error) | undefined): Engine {
  return {
    name: 'instant',
    async render(job) {
      if (failure) throw failure();
      await writeFile(job.outputPath, 'a video');
    },
    async check() {},
  };
}

/** A text task created on `server`, once it has failed. */
async function failedTask(server: Awaited<ReturnType<typeof start>>): Promise<PublicTask> {
  const created = await server.api.create(TEXT);
  assert.equal(created.status, 200);
  return until(async () => {
    const { body } = await server.api.get(created.body.id);
    return body.status === 'failed' ? (body as PublicTask) : undefined;
  }, 'the task failed');
}

describe('a database busy past its wait', () => {
  it('answers a creation 503 overloaded with Retry-After, not 500, and stays ready', async () => {
    const server = await start();
    try {
      server.storeFaults.set('createTask', sqliteBusy);
      assertUnavailable(await server.api.create(TEXT), 'overloaded');
      assert.ok(server.log.some((line) => line.code === 'SQLITE_BUSY' && line.level === 40));
      assert.deepEqual(await server.readyz(), { status: 200, body: { status: 'ready' } });
      server.storeFaults.clear();
      assert.equal((await server.api.create(TEXT)).status, 200);
    } finally {
      await server.close();
    }
  });
});

describe('a full disk', () => {
  it('answers a creation whose row cannot be written 503 storage_full, names SQLITE_FULL in the log, and is not ready', async () => {
    const server = await start();
    try {
      assert.deepEqual(await server.readyz(), { status: 200, body: { status: 'ready' } });
      server.storeFaults.set('createTask', sqliteFull);
      assertUnavailable(await server.api.create(TEXT), 'storage_full');
      const line = server.log.find((entry) => entry.code === 'SQLITE_FULL');
      assert.ok(line, 'no log line names SQLITE_FULL');
      assert.match(String(line.msg), /no space left.*SQLITE_FULL/);
      assert.equal((line.err as { message?: string } | undefined)?.message, 'database or disk is full');
      assert.deepEqual(await server.readyz(), { status: 503, body: { status: 'storage_full' } });
    } finally {
      await server.close();
    }
  });

  it('answers a creation whose inline asset cannot be stored (ENOSPC) 503 storage_full', async () => {
    const server = await start();
    try {
      server.storageFaults.set('putFile', () => enospc('copyfile'));
      const refused = await server.api.create({
        model: 'videogen-2.0-image-to-video',
        prompt: 'inline',
        image_urls: [`data:image/png;base64,${PNG}`],
      });
      assertUnavailable(refused, 'storage_full');
      assert.ok(server.log.some((entry) => entry.code === 'ENOSPC'));
      assert.equal((await server.readyz()).body.status, 'storage_full');
    } finally {
      await server.close();
    }
  });

  it('answers an upload that cannot be stored (ENOSPC) 503 storage_full', async () => {
    const server = await start();
    try {
      server.storageFaults.set('putFile', () => enospc('write'));
      const form = new FormData();
      form.append('file', new Blob([Buffer.from(PNG, 'base64')], { type: 'image/png' }), 'dot.png');
      const response = await fetch(`${server.url}/v1/files`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.api.key}` },
        body: form,
      });
      assertUnavailable(
        { status: response.status, headers: response.headers, body: await response.json() },
        'storage_full',
      );
    } finally {
      await server.close();
    }
  });

  for (const { what, failure, fault } of [
    { what: 'engine cannot write its output (ENOSPC)', failure: () => enospc('write'), fault: undefined },
    {
      what: "engine's ffmpeg cannot write its output",
      failure: () =>
        new TaskFailure(
          'generation_failed',
          'The local engine failed: ffmpeg exited with code 1: [out#0/mp4] Error writing trailer: No space left on device',
        ),
      fault: undefined,
    },
    { what: 'video cannot be stored (ENOSPC)', failure: undefined, fault: 'putFile' },
  ]) {
    it(`fails a render whose ${what} with storage_full, and is not ready`, async () => {
      const server = await start({ VIDEOGEN_WORKER_CONCURRENCY: '1' }, { engine: engine(failure) });
      try {
        if (fault) server.storageFaults.set(fault, () => enospc('copyfile'));
        const task = await failedTask(server);
        assert.equal(task.error?.code, 'storage_full');
        assert.ok(server.log.some((entry) => entry.code === 'ENOSPC' && entry.level === 50));
        assert.deepEqual(await server.readyz(), { status: 503, body: { status: 'storage_full' } });
      } finally {
        await server.close();
      }
    });
  }
});

describe('a storage that fails', () => {
  it('fails a task whose video cannot be stored with internal_error, saying so, and stays ready', async () => {
    const server = await start({ VIDEOGEN_WORKER_CONCURRENCY: '1' }, { engine: engine(undefined) });
    try {
      server.storageFaults.set(
        'putFile',
        () => new Error('connect ECONNREFUSED 10.0.0.9:9000 (bucket videos)'),
      );
      const task = await failedTask(server);
      assert.deepEqual(task.error, {
        code: 'internal_error',
        message: 'The video was generated but the server could not store it.',
      });
      const line = server.log.find((entry) => entry.msg === 'could not store the video');
      assert.match(String((line?.err as { message?: string } | undefined)?.message), /ECONNREFUSED/);
      assert.deepEqual(await server.readyz(), { status: 200, body: { status: 'ready' } });
    } finally {
      await server.close();
    }
  });
});

describe('the space alarm', () => {
  it('is raised for its hold after the last write that failed for lack of space, then lapses', () => {
    let now = 1_000_000;
    const alarm = new SpaceAlarm({ holdMs: 30_000, now: () => now });
    assert.equal(alarm.raised, false);
    alarm.raise();
    now += 20_000;
    assert.equal(alarm.raised, true);
    alarm.raise();
    now += 29_999;
    assert.equal(alarm.raised, true);
    now += 1;
    assert.equal(alarm.raised, false);
  });
});

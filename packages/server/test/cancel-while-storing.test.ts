/**
 * A task that stops being its run's while the run stores the video (issue 33, item 17): cancelled, deleted or
 * its lease lost before the completion, the run's video is not left in storage until retention, on SQLite and
 * PostgreSQL, in files and in S3 (s3rver). The race is driven, not timed: the storage holds the run's upload
 * (before writing it, or once written) until the test has done its part. A run never deletes a video its task
 * owns: a later run of the task that completed it, under the same key.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { S3Client } from '@aws-sdk/client-s3';
import { resultKey } from '../src/domain/storage-keys.js';
import type { PublicTask } from '../src/domain/task.js';
import type { Engine } from '../src/ports/engine.js';
import type { Storage } from '../src/ports/storage.js';
import type { Claim } from '../src/ports/store.js';
import { S3Storage } from '../src/storage/s3-storage.js';
import { Api, type ErrorBody } from './helpers/api.js';
import { freshSchemas, postgresSuite, TEST_DATABASE_URL } from './helpers/postgres.js';
import { type S3TestServer, startS3Server } from './helpers/s3-server.js';
import { startTestService, type TestService } from './helpers/test-service.js';
import { until } from './helpers/until.js';

const TEXT = { model: 'videogen-2.0-text-to-video', prompt: 'a paper boat on a blue river' };
const LEASE_SECONDS = 3600;

/** An engine whose video is a few bytes, written at once: the storing is what these tests are about. */
const instant: Engine = {
  name: 'instant',
  async render(job) {
    await writeFile(job.outputPath, 'the run’s video');
  },
  async check() {},
};

/** Where a held upload waits: before the object is written, or once it is and before `putFile` returns. */
type HoldPoint = 'before' | 'after';

interface Hold {
  /** The key of the held upload, once it reaches the hold point. */
  readonly reached: Promise<string>;
  /** Lets it go on. */
  release(): void;
}

/** `inner`, where the next result upload after `holdNext` waits at its hold point until released. */
class HeldUploads implements Storage {
  #next: { point: HoldPoint; reached: (key: string) => void; gate: Promise<void> } | undefined;

  constructor(readonly inner: Storage) {}

  holdNext(point: HoldPoint): Hold {
    let reached: (key: string) => void = () => {};
    let release: () => void = () => {};
    const hold: Hold = {
      reached: new Promise((resolve) => {
        reached = resolve;
      }),
      release: () => release(),
    };
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.#next = { point, reached, gate };
    return hold;
  }

  async putFile(key: string, localPath: string, contentType: string): Promise<void> {
    const held = key.startsWith('results/') ? this.#next : undefined;
    if (held) this.#next = undefined;
    if (held?.point === 'before') {
      held.reached(key);
      await held.gate;
    }
    await this.inner.putFile(key, localPath, contentType);
    if (held?.point === 'after') {
      held.reached(key);
      await held.gate;
    }
  }

  stat: Storage['stat'] = (key) => this.inner.stat(key);
  read: Storage['read'] = (key, range) => this.inner.read(key, range);
  delete: Storage['delete'] = (key) => this.inner.delete(key);
}

interface Setting {
  readonly name: string;
  readonly env: () => Record<string, string>;
  /** The storage the service uses instead of its own files; its own when absent. */
  readonly storage?: () => Storage;
}

const postgres = await postgresSuite();
let s3: S3TestServer;
let s3Client: S3Client;
let prefixes = 0;
before(async () => {
  s3 = await startS3Server();
  s3Client = new S3Client(s3.clientConfig);
});
after(async () => {
  s3Client.destroy();
  await s3.close();
});

const inS3 = () => new S3Storage({ bucket: s3.bucket, prefix: `cancel-${++prefixes}`, client: s3Client });

function suite(setting: Setting, options: { skip: string | false }): void {
  describe(`a run’s stored video, on ${setting.name}`, options, () => {
    let server: TestService;
    let storage: HeldUploads;
    let api: Api;
    let scratch: string;
    /** The store’s clock: now, plus what the test moved it on by. */
    let ahead = 0;
    // Before freshSchemas registers its own (PostgreSQL): the service is closed before its schema is dropped.
    after(async () => {
      await server?.close();
      await rm(scratch, { recursive: true, force: true });
    });
    const env = setting.env();

    before(async () => {
      scratch = await mkdtemp(join(tmpdir(), 'videogen-cancel-storing-'));
      server = await startTestService(
        {
          ...env,
          VIDEOGEN_WORKER_CONCURRENCY: '1',
          // No renewal during a test: a lost lease is the test's doing.
          VIDEOGEN_LEASE_SECONDS: String(LEASE_SECONDS),
          VIDEOGEN_RATE_LIMIT_PER_MINUTE: '0',
        },
        {
          engine: instant,
          now: () => Date.now() + ahead,
          wrapStorage: (own) => {
            storage = new HeldUploads(setting.storage?.() ?? own);
            return storage;
          },
        },
      );
      api = new Api(server.url, (await server.newKey()).key);
    });

    /**
     * Creates a task and holds its run at `point` while storing its video; runs `meanwhile`, lets the run go on
     * and waits until it has ended, whatever it did on its way out (the pool has no run left).
     */
    async function storedMeanwhile(
      point: HoldPoint,
      meanwhile: (id: string, key: string) => Promise<void>,
    ): Promise<{ id: string; key: string }> {
      const hold = storage.holdNext(point);
      const created = await api.create(TEXT);
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const { id } = created.body;
      const key = await hold.reached;
      try {
        assert.equal(key, resultKey(id));
        await meanwhile(id, key);
      } finally {
        hold.release();
      }
      await until(() => server.service.pool?.activeTasks === 0, 'the run ended');
      return { id, key };
    }

    for (const point of ['before', 'after'] as const) {
      const when = point === 'before' ? 'while it is being stored' : 'once stored, before the completion';
      it(`cancelled ${when}: the task is failed with cancelled and its video is gone`, async () => {
        const { id, key } = await storedMeanwhile(point, async (id) => {
          const cancel = await api.request<PublicTask>('POST', `/v1/tasks/${id}/cancel`);
          assert.equal(cancel.status, 200);
          assert.equal(cancel.body.error?.code, 'cancelled');
        });
        assert.equal(await storage.stat(key), undefined, 'the cancelled task’s video is left in storage');
        const task = (await api.get(id)).body;
        assert.equal(task.status, 'failed');
        assert.equal(task.error?.code, 'cancelled');
        assert.equal(task.results, undefined);
      });
    }

    it('deleted (after its cancel) while stored: the video is gone with the task', async () => {
      const { id, key } = await storedMeanwhile('before', async (id) => {
        assert.equal((await api.request('POST', `/v1/tasks/${id}/cancel`)).status, 200);
        assert.equal((await api.request('DELETE', `/v1/tasks/${id}`)).status, 200);
      });
      assert.equal(await storage.stat(key), undefined);
      assert.equal((await api.get(id)).status, 404);
    });

    it('cancelled once completed: 409 task_not_cancellable, and the video stays the task’s', async () => {
      const created = await api.create(TEXT);
      const done = await api.waitForFinal(created.body.id, 60_000);
      assert.equal(done.status, 'completed');
      const cancel = await api.request<ErrorBody>('POST', `/v1/tasks/${done.id}/cancel`);
      assert.equal(cancel.status, 409);
      assert.equal(cancel.body.error.code, 'task_not_cancellable');
      assert.equal((await api.get(done.id)).body.status, 'completed');
      assert.ok(await storage.stat(resultKey(done.id)), 'the completed task’s video is there');
    });

    /**
     * The held run's lease runs out and another run claims the task (the store's clock moved past the lease),
     * stores its own video under the same key and ends the task with `end`; then the held run stores its video
     * and fails to complete.
     */
    async function lostLease(end: (claim: Claim, key: string) => Promise<boolean>): Promise<string> {
      const { id } = await storedMeanwhile('before', async (id, key) => {
        ahead += (LEASE_SECONDS + 1) * 1000;
        const { store } = server.service;
        // Claims skip a row another transaction has locked (on PostgreSQL): the run's last progress write may
        // still be going on.
        const taken = await until(
          () => store.claimTask({ workerId: 'other-worker', leaseMs: 60_000, maxAttempts: 3 }),
          'the other worker claims the task of the lost lease',
        );
        assert.equal(taken.id, id);
        const video = join(scratch, `${id}.mp4`);
        await writeFile(video, 'the other run’s video');
        await storage.inner.putFile(key, video, 'video/mp4');
        assert.equal(await end({ taskId: id, attempt: taken.attempts, workerId: 'other-worker' }, key), true);
      });
      return id;
    }

    it('lease lost, the task then completed by another run: the video (same key) stays', async () => {
      const id = await lostLease((claim, key) => server.service.store.completeTask(claim, key));
      const task = (await api.get(id)).body;
      assert.equal(task.status, 'completed');
      assert.ok(await storage.stat(resultKey(id)), 'the run that lost its lease deleted the task’s video');
    });

    it('lease lost, the task then failed by another run: the video is gone', async () => {
      const id = await lostLease((claim) =>
        server.service.store.failTask(claim, { code: 'generation_failed', message: 'The other run failed.' }),
      );
      assert.equal((await api.get(id)).body.status, 'failed');
      assert.equal(await storage.stat(resultKey(id)), undefined);
    });
  });
}

suite({ name: 'SQLite, files', env: () => ({}) }, { skip: false });
suite({ name: 'SQLite, S3', env: () => ({}), storage: inS3 }, { skip: false });
suite(
  {
    name: 'PostgreSQL, files',
    env: () => ({ VIDEOGEN_DATABASE_URL: TEST_DATABASE_URL, VIDEOGEN_DATABASE_SCHEMA: freshSchemas()() }),
  },
  postgres,
);
suite(
  {
    name: 'PostgreSQL, S3',
    env: () => ({ VIDEOGEN_DATABASE_URL: TEST_DATABASE_URL, VIDEOGEN_DATABASE_SCHEMA: freshSchemas()() }),
    storage: inS3,
  },
  postgres,
);

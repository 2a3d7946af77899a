/**
 * `aspect_ratio: "adaptive"` is echoed as the ratio it resolved to as soon as that is known: at creation in text
 * mode (16:9), and once the worker has read the first image or video otherwise, before it renders. The store
 * operation behind it writes only under the current claim, on SQLite and PostgreSQL alike.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { GenerationParams } from '../src/domain/generation-request.js';
import { newTaskId } from '../src/domain/identifiers.js';
import type { PublicTask } from '../src/domain/task.js';
import type { Store } from '../src/ports/store.js';
import { PgStore } from '../src/store/pg/pg-store.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { Api } from './helpers/api.js';
import { type AssetServer, startAssetServer } from './helpers/asset-server.js';
import { writeTestImage } from './helpers/media-fixtures.js';
import { freshSchemas, postgresSuite, TEST_DATABASE_URL } from './helpers/postgres.js';
import { startTestService, type TestService } from './helpers/test-service.js';

describe('adaptive aspect ratio, through the API', () => {
  let server: TestService;
  let assets: AssetServer;
  let api: Api;

  before(async () => {
    server = await startTestService({ VIDEOGEN_WORKER_CONCURRENCY: '1' });
    const portrait = join(server.dataDir, 'portrait.png');
    await writeTestImage(portrait, { width: 360, height: 640, colour: [200, 60, 40] });
    assets = await startAssetServer({
      '/portrait.png': { body: await readFile(portrait), type: 'image/png' },
    });
    api = new Api(server.url, (await server.newKey()).key);
  });
  after(async () => {
    await server?.close();
    await assets?.close();
  });

  it('is 16:9 from creation in text mode', async () => {
    const created = await api.create({
      model: 'videogen-2.0-fast-text-to-video',
      prompt: 'a red kite',
      aspect_ratio: 'adaptive',
    });
    assert.equal(created.status, 200);
    assert.equal(created.body.aspect_ratio, '16:9');
    assert.equal((await api.get(created.body.id)).body.aspect_ratio, '16:9');
  });

  it('becomes the first image’s ratio once the worker has read it, before rendering', async () => {
    const created = await api.create({
      model: 'videogen-2.0-fast-image-to-video',
      prompt: 'the scene comes to life',
      image_urls: [`${assets.url}/portrait.png`],
      duration: 4,
      quality: '480p',
      aspect_ratio: 'adaptive',
    });
    assert.equal(created.status, 200);
    assert.equal(created.body.aspect_ratio, 'adaptive', 'not known before the image is read');
    const seen: PublicTask[] = [];
    const final = await api.pollUntil(
      created.body.id,
      (task) => {
        seen.push(task);
        return task.status === 'completed' || task.status === 'failed';
      },
      60_000,
      20,
    );
    assert.equal(final.status, 'completed');
    assert.equal(final.aspect_ratio, '9:16');
    // Downloads end at 5 %; from then on the ratio is known.
    for (const task of seen.filter((t) => t.progress >= 5)) {
      assert.equal(task.aspect_ratio, '9:16', `at ${task.status} ${task.progress}%`);
    }
    const listed = await api.request<{ data: PublicTask[] }>('GET', '/v1/tasks');
    assert.equal(listed.body.data.find((t) => t.id === final.id)?.aspect_ratio, '9:16');
  });
});

const PARAMS: GenerationParams = {
  prompt: 'p',
  image_urls: ['https://example.com/a.png'],
  video_urls: [],
  audio_urls: [],
  duration: 5,
  quality: '720p',
  aspect_ratio: 'adaptive',
  seed: 1,
  callback_url: null,
  generate_audio: false,
};

function recordAspectRatioConformance(name: string, open: () => Store): void {
  it(`${name}: records the ratio under the current claim only`, async () => {
    const store = open();
    try {
      await store.migrate();
      const account = await store.createAccount();
      const id = newTaskId();
      await store.createTask({
        id,
        accountId: account.id,
        environment: 'development',
        model: 'videogen-2.0-image-to-video',
        params: PARAMS,
      });
      const claimed = await store.claimTask({ workerId: 'w1', leaseMs: 30_000, maxAttempts: 3 });
      assert.ok(claimed);
      const stale = { taskId: id, attempt: claimed.attempts - 1, workerId: 'w1' };
      assert.equal(await store.recordAspectRatio(stale, '1:1'), false);
      assert.equal((await store.getTask(id))?.params.aspect_ratio, 'adaptive');
      const claim = { taskId: id, attempt: claimed.attempts, workerId: 'w1' };
      assert.equal(await store.recordAspectRatio(claim, '4:3'), true);
      assert.deepEqual((await store.getTask(id))?.params, { ...PARAMS, aspect_ratio: '4:3' });
    } finally {
      await store.close();
    }
  });
}

describe('Store.recordAspectRatio', () => {
  recordAspectRatioConformance('SqliteStore', () => new SqliteStore({ path: ':memory:' }));
});

describe('Store.recordAspectRatio on PostgreSQL', await postgresSuite(), () => {
  const schema = freshSchemas();
  recordAspectRatioConformance(
    'PgStore',
    () => new PgStore({ connectionString: TEST_DATABASE_URL, schema: schema() }),
  );
});

/** Retention through the whole service: an expired task's query is 404 and its files are gone, and uploads expire. */
import assert from 'node:assert/strict';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { resultKey } from '../src/domain/storage-keys.js';
import { FileStorage } from '../src/storage/file-storage.js';
import { RetentionSweeper } from '../src/tasks/retention.js';
import { Api } from './helpers/api.js';
import { startTestService, type TestService } from './helpers/test-service.js';

const DAY = 24 * 60 * 60 * 1000;
const PNG_1X1 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

let server: TestService;
let api: Api;

before(async () => {
  server = await startTestService({ VIDEOGEN_WORKER_CONCURRENCY: '1' });
  api = new Api(server.url, (await server.newKey()).key);
});
after(async () => {
  await server.close();
});

function sweeper(daysFromNow: number): RetentionSweeper {
  return new RetentionSweeper({
    store: server.service.store,
    storage: new FileStorage({ root: join(server.dataDir, 'files') }),
    logger: pino({ level: 'silent' }),
    retentionDays: 7,
    now: () => Date.now() + daysFromNow * DAY,
  });
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

describe('retention', () => {
  it('deletes final tasks, their files and uploads once VIDEOGEN_RETENTION_DAYS have passed, not before', async () => {
    const { body: created } = await api.create({
      model: 'videogen-2.0-fast-image-to-video',
      prompt: 'kept for a week',
      image_urls: [`data:image/png;base64,${PNG_1X1}`],
      duration: 4,
      quality: '480p',
    });
    const final = await api.waitForFinal(created.id, 60_000);
    assert.equal(final.status, 'completed', JSON.stringify(final.error));
    const video = join(server.dataDir, 'files', resultKey(created.id));
    const task = await server.service.store.getTask(created.id);
    const assetUrl = task?.params.image_urls[0] ?? '';
    assert.match(assetUrl, /^storage:/, 'the inline image was stored');
    const asset = join(server.dataDir, 'files', assetUrl.slice('storage:'.length));
    assert.ok((await exists(video)) && (await exists(asset)));
    // Long enough to be still running when the sweeps below run.
    const { body: pending } = await api.create({
      model: 'videogen-2.0-text-to-video',
      prompt: 'running',
      duration: 15,
      quality: '1080p',
    });
    const form = new FormData();
    form.append('file', new Blob([Buffer.from(PNG_1X1, 'base64')], { type: 'image/png' }), 'pixel.png');
    const answer = await fetch(`${server.url}/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${api.key}` },
      body: form,
    });
    const uploaded = (await answer.json()) as { id: string };
    const upload = join(server.dataDir, 'files', 'uploads', uploaded.id);
    assert.ok(await exists(upload), 'the upload is stored');

    assert.equal(await sweeper(6).sweep(), 0, 'six days later it is kept');
    assert.equal((await api.get(created.id)).status, 200);

    assert.ok((await sweeper(8).sweep()) >= 1);
    assert.equal((await api.get(created.id)).status, 404, 'an expired task is not found');
    assert.equal(await exists(video), false, 'its video is gone');
    assert.equal(await exists(asset), false, 'its stored image is gone');
    assert.equal(
      (await api.request('GET', `/v1/files/${uploaded.id}`)).status,
      404,
      'the upload expired too',
    );
    assert.equal(await exists(upload), false, 'and its object is gone');
    assert.notEqual((await api.get(pending.id)).status, 404, 'a task that has not ended is never expired');
  });
});

/**
 * The interface document's flows, walked with a plain HTTP client exactly as written there
 * (shared/spec/video-generation-service.md): create with `Authorization: Bearer` and
 * `Content-Type: application/json`, read `id` and `status: pending`, poll `GET /v1/tasks/{task_id}` (every
 * 5 s in the document, shortened here) until `completed` or `failed`, and fetch `results[0]`. Nothing of the
 * API beyond that document is used, so a client written only against it keeps working.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type AssetServer, startAssetServer } from './helpers/asset-server.js';
import { writeTestAudio, writeTestImage, writeTestVideo } from './helpers/media-fixtures.js';
import { startTestService, type TestService } from './helpers/test-service.js';
import { until } from './helpers/until.js';
import { startWebhookReceiver, type WebhookReceiver } from './helpers/webhook-receiver.js';

/** The document's cadence is 5 s; the same loop, faster. */
const POLL_INTERVAL_MS = 200;

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Buffer;
}

/** One HTTP exchange with node:http and nothing else: what "any HTTP client works" means. */
function send(method: string, url: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

let server: TestService;
let assets: AssetServer;
let hook: WebhookReceiver;
let baseUrl: string;
let apiKey: string;
let dir: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-contract-'));
  const paths = {
    first: join(dir, 'first.png'),
    last: join(dir, 'last.png'),
    clip: join(dir, 'clip.mp4'),
    music: join(dir, 'music.wav'),
  };
  await Promise.all([
    writeTestImage(paths.first, { width: 800, height: 600, colour: [200, 60, 40], accent: [250, 220, 90] }),
    writeTestImage(paths.last, { width: 800, height: 600, colour: [40, 80, 200], accent: [90, 220, 250] }),
    writeTestVideo(paths.clip, { seconds: 2 }),
    writeTestAudio(paths.music, { seconds: 3 }),
  ]);
  assets = await startAssetServer({
    '/first.png': { body: await readFile(paths.first), type: 'image/png' },
    '/last.png': { body: await readFile(paths.last), type: 'image/png' },
    '/clip.mp4': { body: await readFile(paths.clip), type: 'video/mp4' },
    '/music.wav': { body: await readFile(paths.music), type: 'audio/wav' },
  });
  hook = await startWebhookReceiver();
  server = await startTestService({ VIDEOGEN_WORKER_CONCURRENCY: '2' });
  baseUrl = server.url;
  apiKey = (await server.newKey()).key;
});
after(async () => {
  await server.close();
  await assets.close();
  await hook.close();
  await rm(dir, { recursive: true, force: true });
});

/** Section 4.1. */
async function createTask(body: Record<string, unknown>): Promise<{ id: string; status: string }> {
  const answer = await send(
    'POST',
    `${baseUrl}/v1/videos/generations`,
    { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
    JSON.stringify(body),
  );
  assert.equal(answer.status, 200, answer.body.toString());
  const task = JSON.parse(answer.body.toString()) as { id: string; status: string };
  assert.match(task.id, /^task-unified-/);
  assert.equal(task.status, 'pending');
  return task;
}

/** Section 4.2, rule 3: repeat the query until a final status. */
async function pollUntilFinal(id: string): Promise<{ status: string; progress: number; results?: string[] }> {
  return until(
    async () => {
      const answer = await send('GET', `${baseUrl}/v1/tasks/${id}`, { Authorization: `Bearer ${apiKey}` });
      assert.equal(answer.status, 200);
      const task = JSON.parse(answer.body.toString()) as {
        status: string;
        progress: number;
        results?: string[];
      };
      assert.equal(typeof task.progress, 'number');
      assert.ok(task.progress >= 0 && task.progress <= 100);
      return task.status === 'completed' || task.status === 'failed' ? task : undefined;
    },
    `task ${id} to finish`,
    { timeoutMs: 120_000, intervalMs: POLL_INTERVAL_MS },
  );
}

/** Section 4.2, rule 1: `results[0]` is the video URL. */
async function assertVideoAt(results: string[] | undefined): Promise<void> {
  const url = results?.[0];
  assert.ok(url, 'results[0] is present');
  const video = await send('GET', url, {});
  assert.equal(video.status, 200);
  assert.equal(video.headers['content-type'], 'video/mp4');
  assert.equal(video.body.subarray(4, 8).toString('latin1'), 'ftyp', 'an MP4 file');
}

describe('the interface document, walked as written', () => {
  it('text-to-video, standard and fast: create, poll, results[0]', async () => {
    for (const model of ['videogen-2.0-text-to-video', 'videogen-2.0-fast-text-to-video']) {
      const task = await createTask({
        model,
        prompt: 'A red kite rising over green hills at sunset',
        duration: 5,
        quality: '720p',
        aspect_ratio: '16:9',
      });
      const final = await pollUntilFinal(task.id);
      assert.equal(final.status, 'completed');
      await assertVideoAt(final.results);
    }
  });

  it('image-to-video: one image is first-frame mode, two are first-last-frame mode, with adaptive', async () => {
    for (const image_urls of [
      [`${assets.url}/first.png`],
      [`${assets.url}/first.png`, `${assets.url}/last.png`],
    ]) {
      const task = await createTask({
        model: 'videogen-2.0-fast-image-to-video',
        prompt: 'The scene comes to life',
        image_urls,
        duration: 5,
        quality: '720p',
        aspect_ratio: 'adaptive',
      });
      const final = await pollUntilFinal(task.id);
      assert.equal(final.status, 'completed');
      await assertVideoAt(final.results);
    }
  });

  it('reference-to-video with "video 1" and "audio 1" in plain language, and a callback', async () => {
    const task = await createTask({
      model: 'videogen-2.0-fast-reference-to-video',
      prompt: 'Open on video 1, then the image, with audio 1 as background music',
      image_urls: [`${assets.url}/first.png`],
      video_urls: [`${assets.url}/clip.mp4`],
      audio_urls: [`${assets.url}/music.wav`],
      duration: 6,
      quality: '720p',
      callback_url: `${hook.url}/done`,
    });
    const final = await pollUntilFinal(task.id);
    assert.equal(final.status, 'completed');
    await assertVideoAt(final.results);
    // Section 6: a POST to callback_url whose body has the shape of the query's answer.
    const received = await hook.waitFor(1, 15_000);
    const bodies = received.map(
      (r) => JSON.parse(r.body) as { id: string; status: string; progress: number },
    );
    for (const body of bodies) {
      assert.equal(body.id, task.id);
      assert.equal(typeof body.progress, 'number');
    }
  });

  it('a failed generation ends polling with failed (section 4.2, rule 2)', async () => {
    const task = await createTask({
      model: 'videogen-2.0-fast-image-to-video',
      prompt: 'An image that is not there',
      image_urls: [`${assets.url}/missing.png`],
    });
    assert.equal((await pollUntilFinal(task.id)).status, 'failed');
  });
});

/**
 * The OpenAI Videos API routes driven by OpenAI's own SDK (`openai` from npm, v6: `client.videos`), against the
 * whole service with the local engine: what the SDK sends (a form for every creation, JSON for a remix) is
 * understood, and what the service answers is what the SDK reads (the Video object, the page, the binary
 * content, errors raised as the SDK's classes with OpenAI's `param`).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import OpenAI, { AuthenticationError, BadRequestError, NotFoundError, toFile } from 'openai';
import type { Video } from 'openai/resources/videos';
import { ffprobePath } from '../src/media/ffmpeg-paths.js';
import { writeTestImage } from './helpers/media-fixtures.js';
import { mp4Facts } from './helpers/mp4-facts.js';
import { startTestService, type TestService } from './helpers/test-service.js';
import { until } from './helpers/until.js';

const run = promisify(execFile);
/** One frame at 24 fps: the results' durations are exact to a frame. */
const FRAME = 1 / 24;

let server: TestService;
let client: OpenAI;
let key: string;
let dir: string;

/** The still image's codec and size, as ffprobe reads them. */
async function imageFacts(
  bytes: Buffer,
  name: string,
): Promise<{ codec: string; width: number; height: number }> {
  const path = join(dir, name);
  await writeFile(path, bytes);
  const { stdout } = await run(ffprobePath(), [
    '-v',
    'error',
    '-show_entries',
    'stream=codec_name,width,height',
    '-of',
    'json',
    path,
  ]);
  const stream = (JSON.parse(stdout) as { streams: { codec_name: string; width: number; height: number }[] })
    .streams[0];
  assert.ok(stream, `no stream in ${name}`);
  return { codec: stream.codec_name, width: stream.width, height: stream.height };
}

/** The video, retrieved until it is final; it must complete. */
async function completed(id: string): Promise<Video> {
  const video = await until(
    async () => {
      const current = await client.videos.retrieve(id);
      return (current.status === 'completed' || current.status === 'failed') && current;
    },
    `video ${id} ends`,
    { timeoutMs: 120_000, intervalMs: 100 },
  );
  assert.equal(video.status, 'completed', JSON.stringify(video.error));
  return video;
}

async function downloaded(id: string, variant?: 'thumbnail' | 'spritesheet') {
  const response = await client.videos.downloadContent(id, variant ? { variant } : {});
  return { type: response.headers.get('content-type'), bytes: Buffer.from(await response.arrayBuffer()) };
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-openai-videos-'));
  server = await startTestService({ VIDEOGEN_WORKER_CONCURRENCY: '1' });
  key = (await server.newKey()).key;
  client = new OpenAI({ apiKey: key, baseURL: `${server.url}/v1`, maxRetries: 0 });
});
after(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('the OpenAI Videos API, through the openai SDK', () => {
  let first: Video;

  it('creates a text-to-video task from sora-2, seconds and size, and downloads its MP4, thumbnail and sprite sheet', async () => {
    const created = await client.videos.create({
      model: 'sora-2',
      prompt: 'a paper boat on a pond',
      seconds: '4',
      size: '1280x720',
    });
    assert.equal(created.object, 'video');
    assert.equal(created.status, 'queued');
    assert.equal(created.model, 'videogen-2.0-fast-text-to-video');
    assert.equal(created.seconds, '4');
    assert.equal(created.size, '1280x720');
    assert.equal(created.prompt, 'a paper boat on a pond');
    assert.equal(created.error, null);
    assert.equal(created.completed_at, null);
    assert.match(created.id, /^task-unified-/);

    first = await completed(created.id);
    assert.equal(first.progress, 100);
    assert.ok(first.completed_at !== null && first.completed_at >= first.created_at);
    // Kept VIDEOGEN_RETENTION_DAYS (7 by default) after it completed.
    assert.equal(first.expires_at, (first.completed_at ?? 0) + 7 * 86_400);

    // The same task on this service's own route.
    const task = (await (
      await fetch(`${server.url}/v1/tasks/${created.id}`, { headers: { authorization: `Bearer ${key}` } })
    ).json()) as { status: string; duration: number; quality: string; aspect_ratio: string };
    assert.deepEqual(
      { status: task.status, duration: task.duration, quality: task.quality, ratio: task.aspect_ratio },
      { status: 'completed', duration: 4, quality: '720p', ratio: '16:9' },
    );

    const video = await downloaded(created.id);
    assert.equal(video.type, 'video/mp4');
    await writeFile(join(dir, 'first.mp4'), video.bytes);
    const facts = await mp4Facts(join(dir, 'first.mp4'));
    assert.ok(Math.abs(facts.duration - 4) <= FRAME + 1e-6, `duration ${facts.duration}`);
    assert.equal(facts.video?.width, 1280);
    assert.equal(facts.video?.height, 720);

    const thumbnail = await downloaded(created.id, 'thumbnail');
    assert.equal(thumbnail.type, 'image/webp');
    assert.deepEqual(await imageFacts(thumbnail.bytes, 'thumbnail.webp'), {
      codec: 'webp',
      width: 1280,
      height: 720,
    });

    // A client that takes JPEG and not WebP gets the thumbnail as JPEG.
    const asJpeg = await fetch(`${server.url}/v1/videos/${created.id}/content?variant=thumbnail`, {
      headers: { authorization: `Bearer ${key}`, accept: 'image/jpeg' },
    });
    assert.equal(asJpeg.headers.get('content-type'), 'image/jpeg');
    assert.deepEqual(await imageFacts(Buffer.from(await asJpeg.arrayBuffer()), 'thumbnail.jpg'), {
      codec: 'mjpeg',
      width: 1280,
      height: 720,
    });

    // One frame a second, a quarter of the size each, in a row (at most five to a row).
    const sprites = await downloaded(created.id, 'spritesheet');
    assert.equal(sprites.type, 'image/jpeg');
    assert.deepEqual(await imageFacts(sprites.bytes, 'sprites.jpg'), {
      codec: 'mjpeg',
      width: 4 * 320,
      height: 180,
    });
  });

  it('takes input_reference as a file in the form: an image-to-video task of the size asked', async () => {
    await writeTestImage(join(dir, 'frame.png'), { width: 480, height: 854, colour: [30, 160, 90] });
    const created = await client.videos.create({
      prompt: 'the frame comes alive',
      input_reference: await toFile(await readFile(join(dir, 'frame.png')), 'frame.png', {
        type: 'image/png',
      }),
      seconds: '8',
      // The SDK's type lists OpenAI's sizes only; any frame this service renders is taken.
      size: '480x854' as '720x1280',
    });
    assert.equal(created.model, 'videogen-2.0-fast-image-to-video');
    assert.equal(created.size, '480x854');
    await completed(created.id);
    await writeFile(join(dir, 'image.mp4'), (await downloaded(created.id)).bytes);
    const facts = await mp4Facts(join(dir, 'image.mp4'));
    assert.ok(Math.abs(facts.duration - 8) <= FRAME + 1e-6, `duration ${facts.duration}`);
    assert.deepEqual([facts.video?.width, facts.video?.height], [480, 854]);
  });

  it('remixes a completed video into a reference-to-video task of the same length, size and seed', async () => {
    const remix = await client.videos.remix(first.id, { prompt: 'the same boat, at night' });
    assert.equal(remix.remixed_from_video_id, first.id);
    assert.equal(remix.model, 'videogen-2.0-fast-reference-to-video');
    assert.equal(remix.seconds, first.seconds);
    assert.equal(remix.size, first.size);
    const seedOf = async (id: string) =>
      (
        (await (
          await fetch(`${server.url}/v1/tasks/${id}`, { headers: { authorization: `Bearer ${key}` } })
        ).json()) as { seed: number }
      ).seed;
    assert.equal(await seedOf(remix.id), await seedOf(first.id));
    const done = await completed(remix.id);
    assert.equal(done.remixed_from_video_id, first.id);
    await writeFile(join(dir, 'remix.mp4'), (await downloaded(remix.id)).bytes);
    const facts = await mp4Facts(join(dir, 'remix.mp4'));
    assert.ok(Math.abs(facts.duration - 4) <= FRAME + 1e-6, `duration ${facts.duration}`);
    assert.deepEqual([facts.video?.width, facts.video?.height], [1280, 720]);
  });

  it("lists the key's videos newest first, a page at a time, and shows tasks made on the service's own route", async () => {
    const own = (await (
      await fetch(`${server.url}/v1/videos/generations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'videogen-2.0-fast-text-to-video',
          prompt: 'a kite',
          duration: 6,
          quality: '480p',
        }),
      })
    ).json()) as { id: string };
    const shown = await client.videos.retrieve(own.id);
    assert.equal(shown.seconds, '6');
    assert.equal(shown.size, '854x480');
    assert.ok(['queued', 'in_progress'].includes(shown.status), shown.status);

    const page = await client.videos.list({ limit: 1 });
    assert.equal(page.data.length, 1);
    assert.equal(page.data[0]?.id, own.id);
    assert.equal(page.has_more, true);
    const all: string[] = [];
    for await (const video of client.videos.list({ limit: 2 })) all.push(video.id);
    assert.equal(all.length, 4);
    assert.equal(all[0], own.id);
    assert.ok(all.includes(first.id));
    assert.equal(new Set(all).size, all.length);
  });

  it('deletes a video: retrieving it then is a 404 the SDK raises as NotFoundError', async () => {
    const deleted = await client.videos.delete(first.id);
    assert.deepEqual(deleted, { id: first.id, object: 'video.deleted', deleted: true });
    const error = await client.videos.retrieve(first.id).catch((caught: unknown) => caught);
    assert.ok(error instanceof NotFoundError, String(error));
    assert.equal(error.status, 404);
    assert.equal(error.code, 'task_not_found');
    assert.equal(error.type, 'invalid_request_error');
    const gone = await client.videos.downloadContent(first.id).catch((caught: unknown) => caught);
    assert.ok(gone instanceof NotFoundError, String(gone));
  });

  it("refuses what it cannot map with OpenAI's envelope, naming OpenAI's parameter", async () => {
    const refused = async (params: OpenAI.Videos.VideoCreateParams) => {
      const error = await client.videos.create(params).catch((caught: unknown) => caught);
      assert.ok(error instanceof BadRequestError, String(error));
      return error;
    };
    const size = await refused({ prompt: 'x', size: '1024x1792' });
    assert.equal(size.param, 'size');
    assert.equal(size.code, 'invalid_parameter');
    assert.deepEqual(Object.keys(size.error as object).sort(), ['code', 'message', 'param', 'type']);
    assert.equal((await refused({ prompt: 'x', seconds: '20' as '12' })).param, 'seconds');
    assert.equal((await refused({ prompt: ' ' })).param, 'prompt');
    assert.equal((await refused({ prompt: 'x', model: 'sora-3' })).param, 'model');
    assert.equal(
      (await refused({ prompt: 'x', model: 'videogen-2.0-image-to-video' })).param,
      'input_reference',
    );
    const wrongKey = new OpenAI({ apiKey: 'vg_dev_nope', baseURL: `${server.url}/v1`, maxRetries: 0 });
    const unauthenticated = await wrongKey.videos.list().catch((caught: unknown) => caught);
    assert.ok(unauthenticated instanceof AuthenticationError, String(unauthenticated));
    assert.equal(unauthenticated.code, 'invalid_api_key');
  });
});

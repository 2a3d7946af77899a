/**
 * What the `openai` engine does the same on every server: size and duration mapping, progress, retries,
 * time limits, keys kept out of messages, `check()`. The servers are the strict fakes of
 * test/fakes/video-servers.ts; the dialects themselves are tested in openai-dialect-*.test.ts. A small
 * hostile upstream (not a fake of any real server) answers what no real server should: a 401 that echoes the
 * key, a body that is not a video.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createCanvas, loadImage } from '@napi-rs/canvas';
import { TaskFailure } from '../src/domain/errors.js';
import { imageType, readImageUpload } from '../src/engines/openai/image-upload.js';
import { OpenAiEngine } from '../src/engines/openai/openai-engine.js';
import type { OpenAiOptions } from '../src/engines/openai/openai-options.js';
import { redactSecret } from '../src/engines/redact-secret.js';
import { chooseSeconds, chooseSize } from '../src/engines/size-mapping.js';
import { FakeVideoServer, type VideoServerKind } from './fakes/video-servers.js';
import { writeTestImage } from './helpers/media-fixtures.js';
import {
  assertContractVideo,
  assertProgressRisesToOne,
  jobMaker,
  renderContext,
} from './helpers/render-jobs.js';

const KEY = 'sk-test-Zq8vN3rT5wY1pL7xK2mB9cD4';

let dir: string;
/** A 640x360 PNG image as the runner leaves assets: no extension. */
let imagePath: string;
const fakes: FakeVideoServer[] = [];
const servers: Server[] = [];

async function fake(
  kind: VideoServerKind,
  extra: { legacyModelsRoute?: boolean } = {},
): Promise<FakeVideoServer> {
  const server = await FakeVideoServer.start({
    kind,
    apiKey: KEY,
    cacheDir: join(dir, 'cache'),
    picture: { colour: '0x2060a0' },
    ...extra,
  });
  fakes.push(server);
  return server;
}

function engineFor(
  server: { url: string; kind?: VideoServerKind; servedModel?: string },
  options: Partial<OpenAiOptions> = {},
): OpenAiEngine {
  const kind = server.kind ?? 'sglang';
  return new OpenAiEngine(
    kind,
    {
      type: 'openai',
      server: kind,
      base_url: server.url,
      api_key: KEY,
      model: kind === 'openai' ? 'sora-2' : (server.servedModel ?? 'Wan-AI/Wan2.2-T2V-A14B-Diffusers'),
      poll_interval_ms: 10,
      ...options,
    },
    { baseDir: dir },
  );
}

/** This file's jobs: 4 s of a lighthouse, seed 1234. */
const openAiJob = jobMaker(() => dir, {
  taskPrefix: 'task-openai',
  prompt: 'a lighthouse on a cliff at dusk, waves rolling in',
  duration: 4,
  seed: 1234,
});

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => assert.fail('expected the promise to reject'),
    (error: unknown) => error,
  );
}

async function taskFailure(promise: Promise<unknown>): Promise<TaskFailure> {
  const error = await rejection(promise);
  assert.ok(error instanceof TaskFailure, `a TaskFailure, got ${String(error)}`);
  return error;
}

/**
 * An upstream that misbehaves as no real server should: a 401 quoting the Authorization header it got (after
 * `padding` characters), or a 200 whose body is not a video.
 */
async function hostileUpstream(answer: 'echo-key' | 'not-a-video', padding = 0): Promise<{ url: string }> {
  const server = createServer((request, response) => {
    if (answer === 'echo-key') {
      response.writeHead(401, { 'content-type': 'text/plain' });
      response.end(
        `${'.'.repeat(padding)} Invalid API key in header: authorization=${request.headers.authorization}`,
      );
    } else {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"detail":"queued somewhere else"}');
    }
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-openai-engine-'));
  imagePath = join(dir, 'image-asset');
  await writeTestImage(imagePath, { width: 640, height: 360, colour: [200, 60, 40], format: 'png' });
});

after(async () => {
  await Promise.all(fakes.map((server) => server.close()));
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  await rm(dir, { recursive: true, force: true });
});

describe('openai engine: size and duration mapping', () => {
  it('sends the exact frame and duration when the server accepts any', () => {
    assert.equal(chooseSize({ width: 854, height: 480 }), '854x480');
    assert.equal(chooseSeconds(5), 5);
  });

  it('picks the allowed size of the same orientation, then the nearest shape, then the nearest area', () => {
    const sizes = ['1280x720', '720x1280', '832x480', '480x832', '1024x1024'];
    assert.equal(chooseSize({ width: 854, height: 480 }, sizes), '832x480');
    assert.equal(chooseSize({ width: 1280, height: 720 }, sizes), '1280x720');
    assert.equal(chooseSize({ width: 480, height: 854 }, sizes), '480x832');
    assert.equal(chooseSize({ width: 1080, height: 1080 }, sizes), '1024x1024');
    // 4:3 is nearer 1:1 in shape, but 1:1 is not landscape.
    assert.equal(chooseSize({ width: 640, height: 480 }, sizes), '832x480');
    // 21:9 at 1080p: the 16:9 sizes are equally near in shape, so the larger one.
    assert.equal(chooseSize({ width: 2520, height: 1080 }, sizes), '1280x720');
    // No size of the frame's orientation: the nearest shape of the others.
    assert.equal(chooseSize({ width: 480, height: 480 }, ['1280x720', '720x1280']), '1280x720');
    assert.equal(chooseSize({ width: 480, height: 854 }, ['1280x720', '1024x1024']), '1024x1024');
  });

  it('picks the nearest allowed duration, the longer one on a tie', () => {
    assert.equal(chooseSeconds(2, [4, 8, 12]), 4);
    assert.equal(chooseSeconds(6, [4, 8, 12]), 8);
    assert.equal(chooseSeconds(7, [4, 8, 12]), 8);
    assert.equal(chooseSeconds(15, [12, 4, 8]), 12);
  });

  it('reads an image type from its bytes before its extension', async () => {
    assert.equal(imageType(await readFile(imagePath), imagePath)?.contentType, 'image/png');
    assert.equal(imageType(Buffer.from([0xff, 0xd8, 0xff, 0xe0]), '/x/a.png')?.contentType, 'image/jpeg');
    assert.equal(imageType(Buffer.from('RIFF\0\0\0\0WEBPVP8 '), '/x/a')?.contentType, 'image/webp');
    assert.equal(imageType(Buffer.from('????'), '/x/a.JPEG')?.contentType, 'image/jpeg');
    assert.equal(imageType(Buffer.from('????'), '/x/a'), undefined);
  });

  it('sends a reference of the right size as it is, and fits any other into the size undistorted', async () => {
    const same = await readImageUpload(imagePath, { width: 640, height: 360 }, 'test');
    assert.ok(same.bytes.equals(await readFile(imagePath)), 'the very bytes');
    assert.equal(same.fileName, 'input_reference.png');

    // 16:9 into 9:16: contained over a blurred fill, so the picture keeps its shape in the middle band.
    const fitted = await readImageUpload(imagePath, { width: 720, height: 1280 }, 'test');
    assert.equal(fitted.contentType, 'image/png');
    const picture = await loadImage(fitted.bytes);
    assert.deepEqual([picture.width, picture.height], [720, 1280]);
    const ctx = createCanvas(720, 1280).getContext('2d');
    ctx.drawImage(picture, 0, 0);
    const centre = ctx.getImageData(360, 640, 1, 1).data;
    assert.deepEqual([...centre.slice(0, 3)], [200, 60, 40], 'the picture, unblurred, in the middle');
    const band = (720 / 640) * 360;
    const above = ctx.getImageData(360, Math.floor((1280 - band) / 2) - 40, 1, 1).data;
    assert.notDeepEqual([...above.slice(0, 3)], [200, 60, 40], 'the fill, darkened, above it');
  });
});

describe('openai engine', () => {
  it('renders through polls with rising progress, then downloads and conforms the video', async () => {
    const server = await fake('openai');
    const job = openAiJob();
    const ctx = renderContext();
    await engineFor(server).render(job, ctx);
    await assertContractVideo(job);
    assertProgressRisesToOne(ctx.progress, { strictly: true });
    assert.ok(
      ctx.progress.filter((p) => p < 0.9).length >= 2,
      `intermediate progress: ${ctx.progress.join(', ')}`,
    );
    assert.ok(server.requests.some((r) => r.path.endsWith('/content')));
    for (const request of server.requests) assert.equal(request.authorization, `Bearer ${KEY}`);
  });

  it('retries a 503 and a 429 with Retry-After: 0 on create, then succeeds', async () => {
    const server = await fake('sglang');
    server.busyAnswers.push({ status: 503 }, { status: 429, headers: { 'retry-after': '0' } });
    const job = openAiJob();
    await engineFor(server).render(job, renderContext());
    assert.deepEqual(
      server.requests.filter((r) => r.method === 'POST').map((r) => r.status),
      [503, 429, 200],
    );
    assert.equal(server.creates.length, 1);
    await assertContractVideo(job);
  });

  it('fails with upstream_error when the server answers something that is not a video object', async () => {
    const failure = await taskFailure(
      engineFor(await hostileUpstream('not-a-video')).render(openAiJob(), renderContext()),
    );
    assert.equal(failure.code, 'upstream_error');
    assert.match(
      failure.message,
      /^openai engine "sglang": POST \/v1\/videos answered something that is not a video object/,
    );
  });

  it("fails with upstream_error and the server's reason when the server fails the video", async () => {
    const server = await fake('sglang');
    server.outcome = 'fail';
    const failure = await taskFailure(engineFor(server).render(openAiJob(), renderContext()));
    assert.equal(failure.code, 'upstream_error');
    assert.equal(failure.message, 'openai engine "sglang": the server failed the video: CUDA out of memory');
    assert.deepEqual(server.deletes, [], 'a failed video is not deleted');
  });

  it('fails with timeout and deletes the video when the time limit runs out while it is still queued', async () => {
    const server = await fake('sglang');
    server.outcome = 'never-finish';
    const ctx = renderContext(undefined, { deadlineMs: 300 });
    const failure = await taskFailure(engineFor(server).render(openAiJob(), ctx));
    assert.equal(failure.code, 'timeout');
    assert.equal(
      failure.message,
      `openai engine "sglang": the task was still queued upstream when the task's time limit ran out (0% done).`,
    );
    assert.equal(server.deletes.length, 1);
  });

  it('rejects with the abort reason and leaves no result when aborted mid-generation', async () => {
    const server = await fake('vllm-omni');
    server.outcome = 'never-finish';
    const controller = new AbortController();
    const reason = new Error('the client cancelled the task');
    const job = openAiJob();
    const rendering = engineFor(server).render(job, renderContext(controller.signal));
    while (!server.requests.some((r) => r.method === 'GET' && r.path.startsWith('/v1/videos/'))) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    controller.abort(reason);
    assert.equal(await rejection(rendering), reason);
    assert.equal(server.requests.find((r) => r.method === 'DELETE')?.authorization, `Bearer ${KEY}`);
    assert.equal(await stat(job.outputPath).catch(() => undefined), undefined, 'no result file');
  });

  it('keeps the key out of messages when the server echoes the Authorization header', async () => {
    const echo = await hostileUpstream('echo-key');
    const failure = await taskFailure(engineFor(echo).render(openAiJob(), renderContext()));
    assert.equal(failure.code, 'upstream_error');
    assert.match(failure.message, /answered HTTP 401/);
    assert.match(failure.message, /\[redacted\]/);
    assert.ok(!failure.message.includes(KEY), failure.message);
    assert.ok(!String(failure.stack).includes(KEY));
    assert.equal(failure.cause, undefined);

    // A long answer cut off inside the key: the part before the cut must not show either.
    const cut = await hostileUpstream('echo-key', 240);
    const cutFailure = await taskFailure(engineFor(cut).render(openAiJob(), renderContext()));
    assert.match(cutFailure.message, /…/);
    assert.ok(!cutFailure.message.includes(KEY.slice(0, 8)), cutFailure.message);

    const checkError = await rejection(engineFor(echo).check(AbortSignal.timeout(10_000)));
    assert.ok(checkError instanceof Error);
    assert.match(checkError.message, /401/);
    assert.ok(!checkError.message.includes(KEY), checkError.message);
  });

  it('redacts a key and a start of it cut off by an excerpt', () => {
    assert.equal(redactSecret('a sk-123456 b sk-123456', 'sk-123456'), 'a [redacted] b [redacted]');
    assert.equal(redactSecret('Bearer sk-1234…', 'sk-123456'), 'Bearer [redacted]…');
    assert.equal(redactSecret('Bearer sk-1234… (gave up)', 'sk-123456'), 'Bearer [redacted]… (gave up)');
    assert.equal(redactSecret('ends with sk-1234', 'sk-123456'), 'ends with [redacted]');
    assert.equal(redactSecret('nothing here…', 'sk-123456'), 'nothing here…');
    assert.equal(redactSecret('untouched', undefined), 'untouched');
  });

  it("check() reads /v1/models, an older SGLang's /models, and reports what is not ready", async () => {
    const current = await fake('sglang');
    await engineFor(current).check(AbortSignal.timeout(10_000));
    assert.deepEqual(
      current.requests.map((r) => [r.method, r.path, r.authorization]),
      [['GET', '/v1/models', `Bearer ${KEY}`]],
    );

    const legacy = await fake('sglang', { legacyModelsRoute: true });
    await engineFor(legacy).check(AbortSignal.timeout(10_000));
    assert.deepEqual(
      legacy.requests.map((r) => [r.path, r.status]),
      [
        ['/v1/models', 404],
        ['/models', 200],
      ],
    );

    // A port nobody listens on: take one from a server and close it.
    const gone = createServer();
    await new Promise<void>((resolve) => gone.listen(0, '127.0.0.1', resolve));
    const port = (gone.address() as AddressInfo).port;
    await new Promise<void>((resolve) => gone.close(() => resolve()));
    const downError = await rejection(
      engineFor({ url: `http://127.0.0.1:${port}` }).check(AbortSignal.timeout(10_000)),
    );
    assert.ok(downError instanceof Error);
    assert.match(downError.message, /^openai engine "sglang": GET \/v1\/models failed: .*ECONNREFUSED/);
    assert.ok(!downError.message.includes(KEY));
  });

  it('refuses at start an extra_body that sets what the engine sets, and frame_step without fps', () => {
    const url = 'http://127.0.0.1:9';
    assert.throws(() => engineFor({ url }, { extra_body: { prompt: 'x' } }), /the engine sets prompt/);
    assert.throws(
      () => engineFor({ url }, { fps: 16, extra_body: { num_frames: 81 } }),
      /the engine sets num_frames/,
    );
    assert.throws(() => engineFor({ url }, { frame_step: 4 }), /frame_step: goes with fps/);
  });
});

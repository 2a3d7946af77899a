import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { imageType } from '../src/engines/openai/image-upload.js';
import { OpenAiEngine } from '../src/engines/openai/openai-engine.js';
import type { OpenAiOptions } from '../src/engines/openai/openai-options.js';
import { chooseSeconds, chooseSize } from '../src/engines/openai/size-mapping.js';
import { redactSecret } from '../src/engines/redact-secret.js';
import { TaskFailure } from '../src/errors.js';
import { writeTestImage, writeTestVideo } from './helpers/media-fixtures.js';
import {
  assertContractVideo,
  assertProgressRisesToOne,
  jobMaker,
  renderContext,
} from './helpers/render-jobs.js';

const KEY = 'sk-test-Zq8vN3rT5wY1pL7xK2mB9cD4';
const ENGINE_NAME = 'sglang';

let dir: string;
/** What the fake server serves as every video's content: another size and frame rate than any job asks. */
let upstreamVideo: Buffer;
/** A PNG image as the runner leaves assets: no extension. */
let imagePath: string;
const servers: Server[] = [];

// ---------------------------------------------------------------------------------------------------------
// A fake SGLang Diffusion server: OpenAI's Videos API, recording what it is sent.

type Outcome = 'complete' | 'fail' | 'stay-queued' | 'never-finish';

interface Behaviour {
  /** The key it expects; any other `Authorization` gets a 401 whose body echoes the header. */
  readonly key?: string;
  /** Characters before the echoed header in a 401 body (to make an excerpt cut inside the key). */
  readonly echoPadding?: number;
  /** Answers to the first create requests before the one that succeeds. */
  readonly createFailures?: readonly { status: number; headers?: Record<string, string> }[];
  /** Always answer create with this instead of a video. */
  readonly createAnswer?: { readonly status: number; readonly body: string };
  readonly outcome?: Outcome;
  readonly modelsStatus?: number;
  /** Serve model information at SGLang Diffusion's `/models` instead of `/v1/models`. */
  readonly sglangModels?: boolean;
}

interface RecordedCreate {
  readonly contentType: string;
  readonly json?: Record<string, unknown>;
  readonly fields?: Record<string, string>;
  readonly file?: { readonly bytes: Buffer; readonly type: string; readonly name: string };
}

interface FakeServer {
  readonly url: string;
  readonly requests: { method: string; path: string; authorization: string | undefined }[];
  readonly creates: RecordedCreate[];
  readonly deletes: string[];
}

interface FakeVideo {
  readonly id: string;
  polls: number;
}

function video(id: string, status: string, progress: number, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ id, object: 'video', model: 'Wan2.1', status, progress, created_at: 0, ...extra });
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function recordCreate(req: IncomingMessage, body: Buffer): Promise<RecordedCreate> {
  const contentType = req.headers['content-type'] ?? '';
  if (contentType.startsWith('application/json')) {
    return { contentType, json: JSON.parse(body.toString('utf8')) as Record<string, unknown> };
  }
  const form = await new Response(body, { headers: { 'content-type': contentType } }).formData();
  const fields: Record<string, string> = {};
  let file: RecordedCreate['file'];
  for (const [name, value] of form) {
    if (typeof value === 'string') fields[name] = value;
    else if (name === 'input_reference') {
      file = { bytes: Buffer.from(await value.arrayBuffer()), type: value.type, name: value.name };
    }
  }
  return { contentType, fields, file };
}

/** The video's state at its `polls`-th poll under `outcome`. */
function pollAnswer(fake: FakeVideo, outcome: Outcome): string {
  const n = fake.polls;
  switch (outcome) {
    case 'complete':
      return n >= 4
        ? video(fake.id, 'completed', 100)
        : video(fake.id, 'in_progress', [20, 55, 85][n - 1] ?? 0);
    case 'fail':
      return n >= 2
        ? video(fake.id, 'failed', 30, {
            error: { code: 'internal_error', message: 'CUDA out of memory on GPU 0' },
          })
        : video(fake.id, 'in_progress', 30);
    case 'stay-queued':
      return video(fake.id, 'queued', 0);
    case 'never-finish':
      return video(fake.id, 'in_progress', Math.min(80, 10 * n));
  }
}

async function startServer(behaviour: Behaviour = {}): Promise<FakeServer> {
  const state: FakeServer = { url: '', requests: [], creates: [], deletes: [] };
  const videos = new Map<string, FakeVideo>();
  let createAttempts = 0;
  const send = (res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(body);
  };
  const server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const path = new URL(req.url ?? '/', 'http://fake').pathname;
      const authorization = req.headers.authorization;
      state.requests.push({ method: req.method ?? '', path, authorization });
      if (behaviour.key !== undefined && authorization !== `Bearer ${behaviour.key}`) {
        const padding = '.'.repeat(behaviour.echoPadding ?? 0);
        res.writeHead(401, { 'content-type': 'text/plain' });
        res.end(`${padding} Invalid API key in header: authorization=${authorization ?? '(none)'}`);
        return;
      }
      if (req.method === 'GET' && behaviour.sglangModels && path === '/models') {
        send(res, 200, '{"model_path":"Wan-AI/Wan2.1-T2V-1.3B-Diffusers","task_type":"T2V"}');
        return;
      }
      if (req.method === 'GET' && path === '/v1/models' && !behaviour.sglangModels) {
        const status = behaviour.modelsStatus ?? 200;
        send(
          res,
          status,
          status === 200 ? '{"object":"list","data":[{"id":"Wan2.1"}]}' : '{"error":"warming up"}',
        );
        return;
      }
      if (req.method === 'POST' && path === '/v1/videos') {
        createAttempts++;
        const failure = behaviour.createFailures?.[createAttempts - 1];
        if (failure) {
          send(res, failure.status, '{"error":{"message":"busy"}}', failure.headers);
          return;
        }
        state.creates.push(await recordCreate(req, body));
        if (behaviour.createAnswer) {
          send(res, behaviour.createAnswer.status, behaviour.createAnswer.body);
          return;
        }
        const id = `video_${state.creates.length}`;
        videos.set(id, { id, polls: 0 });
        send(res, 200, video(id, 'queued', 0));
        return;
      }
      const match = /^\/v1\/videos\/([^/]+)(\/content)?$/.exec(path);
      const fake = match ? videos.get(match[1] ?? '') : undefined;
      if (!match || !fake) {
        send(res, 404, '{"error":{"message":"not found"}}');
      } else if (req.method === 'DELETE' && !match[2]) {
        state.deletes.push(fake.id);
        send(res, 200, JSON.stringify({ id: fake.id, object: 'video.deleted', deleted: true }));
      } else if (req.method === 'GET' && match[2]) {
        res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(upstreamVideo.length) });
        res.end(upstreamVideo);
      } else if (req.method === 'GET') {
        fake.polls++;
        send(res, 200, pollAnswer(fake, behaviour.outcome ?? 'complete'));
      } else {
        send(res, 405, '{}');
      }
    })().catch((error: unknown) => {
      res.writeHead(500);
      res.end(String(error));
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { ...state, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

// ---------------------------------------------------------------------------------------------------------

function engineFor(server: FakeServer, options: Partial<OpenAiOptions> = {}): OpenAiEngine {
  return new OpenAiEngine(
    ENGINE_NAME,
    {
      type: 'openai',
      base_url: server.url,
      api_key: KEY,
      model: 'Wan-AI/Wan2.1-T2V-1.3B-Diffusers',
      poll_interval_ms: 20,
      ...options,
    },
    { baseDir: dir },
  );
}

/** This file's jobs: 2 s of a lighthouse, seed 1234. */
const openAiJob = jobMaker(() => dir, {
  taskPrefix: 'task-openai',
  prompt: 'a lighthouse on a cliff at dusk, waves rolling in',
  duration: 2,
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

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-openai-engine-'));
  const videoPath = join(dir, 'upstream.mp4');
  imagePath = join(dir, 'image-asset');
  await Promise.all([
    writeTestVideo(videoPath, { width: 320, height: 240, fps: 30, seconds: 1.5 }),
    writeTestImage(imagePath, { width: 640, height: 360, colour: [200, 60, 40], format: 'png' }),
  ]);
  upstreamVideo = await readFile(videoPath);
});

after(async () => {
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
});

describe('openai engine', () => {
  it('renders a text job: JSON create, polls with rising progress, downloads and conforms the video', async () => {
    const server = await startServer({ key: KEY });
    const engine = engineFor(server, { extra_body: { num_inference_steps: 4, guidance_scale: 5.5 } });
    assert.equal(engine.name, ENGINE_NAME);
    const job = openAiJob();
    const ctx = renderContext();
    await engine.render(job, ctx);

    await assertContractVideo(job);
    assert.equal(server.creates.length, 1);
    const create = server.creates[0];
    assert.ok(create, 'the server got a create request');
    assert.ok(create.contentType.startsWith('application/json'), create.contentType);
    assert.deepEqual(create.json, {
      model: 'Wan-AI/Wan2.1-T2V-1.3B-Diffusers',
      prompt: job.params.prompt,
      size: '854x480',
      seconds: '2',
      seed: 1234,
      num_inference_steps: 4,
      guidance_scale: 5.5,
    });
    const polls = server.requests.filter((r) => r.method === 'GET' && r.path === '/v1/videos/video_1');
    assert.equal(polls.length, 4);
    assert.ok(server.requests.some((r) => r.path === '/v1/videos/video_1/content'));
    for (const request of server.requests) {
      assert.equal(
        request.authorization,
        `Bearer ${KEY}`,
        `${request.method} ${request.path} carries the key`,
      );
    }
    assert.deepEqual(server.deletes, []);

    // Progress never decreases, follows the server's 20/55/85 % inside the generation share, ends at 1.
    assertProgressRisesToOne(ctx.progress);
    assert.ok(ctx.progress.every((p) => p > 0));
    assert.ok(
      ctx.progress.filter((p) => p < 0.9).length >= 3,
      `intermediate progress: ${ctx.progress.join(', ')}`,
    );
    assert.ok(ctx.progress.some((p) => Math.abs(p - 0.9 * 0.55) < 1e-9));
  });

  it('sends an image job as multipart with the image as input_reference', async () => {
    const server = await startServer();
    const engine = engineFor(server, {
      api_key: undefined,
      extra_body: { num_inference_steps: 4, flow_shift: null },
    });
    const job = openAiJob({ model: 'videogen-2.0-image-to-video', images: [imagePath] });
    await engine.render(job, renderContext());

    await assertContractVideo(job);
    const create = server.creates[0];
    assert.ok(create, 'the server got a create request');
    assert.ok(create.contentType.startsWith('multipart/form-data; boundary='), create.contentType);
    assert.deepEqual(create.fields, {
      model: 'Wan-AI/Wan2.1-T2V-1.3B-Diffusers',
      prompt: job.params.prompt,
      size: '854x480',
      seconds: '2',
      seed: '1234',
      num_inference_steps: '4',
    });
    assert.ok(create.file, 'has an input_reference file');
    assert.ok(create.file.bytes.equals(await readFile(imagePath)), 'the file is the image, byte for byte');
    assert.equal(create.file.type, 'image/png');
    assert.equal(create.file.name, 'input_reference.png');
    // Without an api_key, no Authorization header at all.
    assert.ok(server.requests.every((r) => r.authorization === undefined));
  });

  it('maps the frame and duration onto the sizes and seconds the server accepts', async () => {
    const server = await startServer({ key: KEY });
    const engine = engineFor(server, {
      sizes: ['1280x720', '720x1280', '832x480', '480x832'],
      seconds: [4, 8],
    });
    const job = openAiJob({ ratio: '9:16', duration: 2 });
    await engine.render(job, renderContext());

    assert.equal(server.creates[0]?.json?.size, '480x832');
    assert.equal(server.creates[0]?.json?.seconds, '4');
    // The server's 320x240 30 fps 1.5 s video is conformed to the job's 480x854, 24 fps, 2 s.
    await assertContractVideo(job);
  });

  it("fails with upstream_error and the server's reason when the server fails the video", async () => {
    const server = await startServer({ key: KEY, outcome: 'fail' });
    const failure = await taskFailure(engineFor(server).render(openAiJob(), renderContext()));
    assert.equal(failure.code, 'upstream_error');
    assert.equal(
      failure.message,
      `openai engine "${ENGINE_NAME}": the server failed the video: CUDA out of memory on GPU 0`,
    );
    assert.deepEqual(server.deletes, []);
  });

  it('fails with upstream_error when the server answers something that is not a video object', async () => {
    const server = await startServer({
      key: KEY,
      createAnswer: { status: 200, body: '{"detail":"queued somewhere else"}' },
    });
    const failure = await taskFailure(engineFor(server).render(openAiJob(), renderContext()));
    assert.equal(failure.code, 'upstream_error');
    assert.match(
      failure.message,
      /^openai engine "sglang": POST \/v1\/videos answered something that is not a video object/,
    );
  });

  it('retries a 503 and a 429 with Retry-After: 0 on create, then succeeds', async () => {
    const server = await startServer({
      key: KEY,
      createFailures: [{ status: 503 }, { status: 429, headers: { 'retry-after': '0' } }],
    });
    const job = openAiJob();
    await engineFor(server).render(job, renderContext());
    assert.equal(server.requests.filter((r) => r.method === 'POST').length, 3);
    assert.equal(server.creates.length, 1);
    await assertContractVideo(job);
  });

  it('fails at once with upstream_error when create answers 400', async () => {
    const server = await startServer({
      key: KEY,
      createAnswer: { status: 400, body: '{"error":{"message":"size 854x480 is not supported"}}' },
    });
    const failure = await taskFailure(engineFor(server).render(openAiJob(), renderContext()));
    assert.equal(failure.code, 'upstream_error');
    assert.match(failure.message, /openai engine "sglang": POST \/v1\/videos answered HTTP 400/);
    assert.match(failure.message, /size 854x480 is not supported/);
    assert.equal(server.requests.length, 1);
  });

  it('fails with timeout and deletes the video when the time limit runs out while it is still queued', async () => {
    const server = await startServer({ key: KEY, outcome: 'stay-queued' });
    const started = Date.now();
    const ctx = renderContext(undefined, { deadlineMs: 600 });
    const failure = await taskFailure(engineFor(server).render(openAiJob(), ctx));
    assert.equal(failure.code, 'timeout');
    assert.equal(
      failure.message,
      `openai engine "${ENGINE_NAME}": the video was still queued, 0% done when the task's time limit ran out.`,
    );
    assert.ok(Date.now() - started < 3000, 'gave up soon after the deadline');
    assert.deepEqual(server.deletes, ['video_1']);
  });

  it('deletes the upstream video and rejects with the abort reason when aborted mid-generation', async () => {
    const server = await startServer({ key: KEY, outcome: 'never-finish' });
    const controller = new AbortController();
    const reason = new Error('the client cancelled the task');
    const job = openAiJob();
    const ctx = renderContext(controller.signal, {
      onProgress: (fraction) => {
        if (fraction >= 0.9 * 0.3) controller.abort(reason);
      },
    });
    const error = await rejection(engineFor(server).render(job, ctx));
    assert.equal(error, reason);
    assert.deepEqual(server.deletes, ['video_1']);
    const deleteRequest = server.requests.find((r) => r.method === 'DELETE');
    assert.equal(deleteRequest?.authorization, `Bearer ${KEY}`);
    assert.equal(await stat(job.outputPath).catch(() => undefined), undefined, 'no result file');
  });

  it('keeps the key out of messages when the server echoes the Authorization header', async () => {
    const wrongKey = await startServer({ key: 'sk-the-right-one' });
    const failure = await taskFailure(engineFor(wrongKey).render(openAiJob(), renderContext()));
    assert.equal(failure.code, 'upstream_error');
    assert.match(failure.message, /answered HTTP 401/);
    assert.match(failure.message, /\[redacted\]/);
    assert.ok(!failure.message.includes(KEY), failure.message);
    assert.ok(!String(failure.stack).includes(KEY));
    assert.equal(failure.cause, undefined);

    // A long answer cut off inside the key: the part before the cut must not show either.
    const cut = await startServer({ key: 'sk-the-right-one', echoPadding: 240 });
    const cutFailure = await taskFailure(engineFor(cut).render(openAiJob(), renderContext()));
    assert.match(cutFailure.message, /…/);
    assert.ok(!cutFailure.message.includes(KEY.slice(0, 8)), cutFailure.message);

    const checkError = await rejection(engineFor(wrongKey).check(AbortSignal.timeout(10_000)));
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

  it('check() resolves against a server that answers /v1/models and rejects against one that does not', async () => {
    const up = await startServer({ key: KEY });
    await engineFor(up).check(AbortSignal.timeout(10_000));
    assert.deepEqual(up.requests, [{ method: 'GET', path: '/v1/models', authorization: `Bearer ${KEY}` }]);

    const sglang = await startServer({ key: KEY, sglangModels: true });
    await engineFor(sglang).check(AbortSignal.timeout(10_000));
    assert.deepEqual(
      sglang.requests.map((r) => r.path),
      ['/v1/models', '/models'],
      "SGLang Diffusion's /models answers when /v1/models is not found",
    );

    const unhealthy = await startServer({ key: KEY, modelsStatus: 503 });
    const unhealthyError = await rejection(engineFor(unhealthy).check(AbortSignal.timeout(10_000)));
    assert.ok(unhealthyError instanceof Error);
    assert.match(unhealthyError.message, /^openai engine "sglang": GET \/v1\/models answered HTTP 503/);
    assert.equal(unhealthy.requests.length, 1, 'one attempt');

    // A port nobody listens on: take one from a server and close it.
    const gone = createServer();
    await new Promise<void>((resolve) => gone.listen(0, '127.0.0.1', resolve));
    const port = (gone.address() as AddressInfo).port;
    await new Promise<void>((resolve) => gone.close(() => resolve()));
    const down = new OpenAiEngine(
      'down',
      { type: 'openai', base_url: `http://127.0.0.1:${port}`, api_key: KEY, model: 'm' },
      { baseDir: dir },
    );
    const downError = await rejection(down.check(AbortSignal.timeout(10_000)));
    assert.ok(downError instanceof Error);
    assert.match(downError.message, /^openai engine "down": GET \/v1\/models failed: .*ECONNREFUSED/);
    assert.ok(!downError.message.includes(KEY));
  });
});

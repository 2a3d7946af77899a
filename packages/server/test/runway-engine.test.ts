/**
 * The `runway` engine against the strict fake of Runway's API (test/fakes/runway-server.ts) over real HTTP:
 * each mode rendered and conformed, the exact bodies Runway receives, the task followed to its end, retries,
 * refusals and failures, cancel upstream on abort and timeout, `check()`, the capabilities each model has,
 * and what the fake itself refuses.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ANY_INPUT, unsupportedInput } from '../src/domain/engine-capabilities.js';
import { TaskFailure } from '../src/domain/errors.js';
import type { GenerationParams } from '../src/domain/generation-request.js';
import { getModel } from '../src/domain/models.js';
import { createEngines } from '../src/engines/create-engines.js';
import { capabilitiesOf } from '../src/engines/engine-types.js';
import { loadEnginesFile, parseEnginesConfig } from '../src/engines/engines-file.js';
import { routedInputCheck } from '../src/engines/routed-inputs.js';
import { RunwayEngine } from '../src/engines/runway/runway-engine.js';
import type { RunwayOptions } from '../src/engines/runway/runway-options.js';
import { FakeRunwayServer } from './fakes/runway-server.js';
import { docsExample } from './helpers/docs-examples.js';
import { writeTestAudio, writeTestImage, writeTestVideo } from './helpers/media-fixtures.js';
import {
  assertContractVideo,
  assertProgressRisesToOne,
  type JobAsset,
  jobMaker,
  renderContext,
} from './helpers/render-jobs.js';

const KEY = `key_${'3f9a1c7e5b2d4086'.repeat(8)}`;
const WRONG_KEY = `key_${'0'.repeat(128)}`;
const VERSION = '2024-11-06';
/** Short, so that a task's few polls take milliseconds; the fake moves a task one step per poll. */
const POLL_MS = 5;

type RunwayModelId = RunwayOptions['model'];

let dir: string;
/** A 16:9 first frame (PNG), a 16:9 last frame (JPEG), a portrait image, a clip and a tone. */
let wide: JobAsset;
let end: JobAsset;
let tall: JobAsset;
let clip: string;
let tone: string;
const servers: FakeRunwayServer[] = [];

async function fake(): Promise<FakeRunwayServer> {
  const started = await FakeRunwayServer.start({ apiKey: KEY, cacheDir: join(dir, 'cache') });
  servers.push(started);
  return started;
}

function engineFor(
  target: FakeRunwayServer,
  model: RunwayModelId,
  options: Partial<RunwayOptions> = {},
): RunwayEngine {
  return new RunwayEngine(
    `rw-${model}`,
    { type: 'runway', base_url: target.url, api_key: KEY, model, poll_interval_ms: POLL_MS, ...options },
    { baseDir: dir },
  );
}

const runwayJob = jobMaker(() => dir, {
  taskPrefix: 'task-runway',
  prompt: 'a paper kite climbing over a windy beach, clouds racing',
  duration: 4,
  seed: 4242,
});

/** A `data:` URI shown as its head and a digest, so that bodies compare (and fail) briefly. */
function digest(uri: string): string {
  return `${uri.slice(0, uri.indexOf(',') + 1)}sha256:${createHash('sha256').update(uri).digest('hex')}`;
}

/** `value` with each `data:` URI in it digested. */
function digested(value: unknown): unknown {
  if (typeof value === 'string') return value.startsWith('data:') ? digest(value) : value;
  if (Array.isArray(value)) return value.map(digested);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([name, field]) => [name, digested(field)]));
  }
  return value;
}

/** What the file at `path` must be sent as: its bytes inline with the type they are, digested. */
async function uriOf(path: string, type: string): Promise<string> {
  return digest(`data:${type};base64,${(await readFile(path)).toString('base64')}`);
}

/** The endpoint and the body (its `data:` URIs digested) of the fake's `index`th create. */
function created(target: FakeRunwayServer, index = 0): { path: string; body: unknown } {
  const create = target.creates[index];
  assert.ok(create, `create ${index} was received`);
  return { path: create.path, body: digested(create.body) };
}

/** Every call to the API carried the key as a bearer token and the version. */
function assertSignedCalls(target: FakeRunwayServer): void {
  assert.ok(target.requests.length > 0);
  for (const request of target.requests) {
    assert.equal(request.authorization, `Bearer ${KEY}`, `${request.method} ${request.path}`);
    assert.equal(request.version, VERSION, `${request.method} ${request.path}`);
  }
}

/** The result was fetched from the signed link, without the key. */
function assertKeylessDownload(target: FakeRunwayServer): void {
  assert.ok(target.downloads.length > 0, 'the result was downloaded');
  for (const authorization of target.downloads) assert.equal(authorization, undefined);
}

async function taskFailure(promise: Promise<unknown>): Promise<TaskFailure> {
  const error = await promise.then(
    () => assert.fail('expected the render to fail'),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof TaskFailure, `a TaskFailure, got ${String(error)}`);
  return error;
}

async function checkError(engine: RunwayEngine): Promise<Error> {
  const error = await engine.check(new AbortController().signal).then(
    () => assert.fail('expected check() to fail'),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof Error);
  return error;
}

function methods(target: FakeRunwayServer, method: string): { path: string; status: number }[] {
  return target.requests
    .filter((request) => request.method === method)
    .map(({ path, status }) => ({ path, status }));
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-runway-engine-'));
  wide = { path: join(dir, 'wide.png'), width: 1280, height: 720 };
  end = { path: join(dir, 'end.jpg'), width: 1280, height: 720 };
  tall = { path: join(dir, 'tall.jpg'), width: 600, height: 1000 };
  clip = join(dir, 'clip.mp4');
  tone = join(dir, 'tone.wav');
  await Promise.all([
    writeTestImage(wide.path, { width: 1280, height: 720, colour: [30, 90, 200], accent: [250, 220, 40] }),
    writeTestImage(end.path, { width: 1280, height: 720, colour: [220, 120, 30], accent: [20, 40, 160] }),
    writeTestImage(tall.path, { width: 600, height: 1000, colour: [200, 60, 40], accent: [40, 220, 90] }),
    writeTestVideo(clip, { width: 320, height: 240, seconds: 2 }),
    writeTestAudio(tone, { seconds: 2 }),
  ]);
});

after(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await rm(dir, { recursive: true, force: true });
});

describe('runway engine: each mode', () => {
  it('sends a text job on gen4.5 to text_to_video at 1280:720 with its seed, and conforms the result', async () => {
    const target = await fake();
    const job = runwayJob({ quality: '720p', ratio: '16:9', duration: 5, seed: 7 });
    const ctx = renderContext();
    await engineFor(target, 'gen4.5').render(job, ctx);
    await assertContractVideo(job);
    assertProgressRisesToOne(ctx.progress, { strictly: true });
    assert.deepEqual(created(target), {
      path: '/v1/text_to_video',
      body: { model: 'gen4.5', promptText: job.params.prompt, ratio: '1280:720', duration: 5, seed: 7 },
    });
    assertSignedCalls(target);
    assertKeylessDownload(target);
    // Created once, then polled through PENDING, THROTTLED and RUNNING to SUCCEEDED; nothing cancelled.
    assert.equal(methods(target, 'POST').length, 1);
    assert.ok(methods(target, 'GET').every((call) => /^\/v1\/tasks\/[0-9a-f-]{36}$/.test(call.path)));
    assert.deepEqual(methods(target, 'DELETE'), []);
  });

  it("sends gen4_turbo's one image as promptImage, 9:16 as 720:1280, with the seed", async () => {
    const target = await fake();
    const job = runwayJob({
      model: 'videogen-2.0-fast-image-to-video',
      quality: '480p',
      ratio: '9:16',
      images: [tall],
    });
    const ctx = renderContext();
    await engineFor(target, 'gen4_turbo').render(job, ctx);
    await assertContractVideo(job);
    assertProgressRisesToOne(ctx.progress, { strictly: true });
    assert.deepEqual(created(target), {
      path: '/v1/image_to_video',
      body: {
        model: 'gen4_turbo',
        promptText: job.params.prompt,
        promptImage: await uriOf(tall.path, 'image/jpeg'),
        ratio: '720:1280',
        duration: 4,
        seed: 4242,
      },
    });
    assertSignedCalls(target);
    assertKeylessDownload(target);
  });

  it('sends first and last frames to veo3.1 by position, 1080p adaptive as 1920:1080, 5 s as 6, no sound', async () => {
    const target = await fake();
    const job = runwayJob({
      model: 'videogen-2.0-image-to-video',
      quality: '1080p',
      ratio: 'adaptive',
      duration: 5,
      images: [wide, end],
    });
    assert.deepEqual(job.frame, { width: 1920, height: 1080 });
    const ctx = renderContext();
    await engineFor(target, 'veo3.1').render(job, ctx);
    await assertContractVideo(job);
    assertProgressRisesToOne(ctx.progress, { strictly: true });
    assert.deepEqual(created(target), {
      path: '/v1/image_to_video',
      body: {
        model: 'veo3.1',
        promptText: job.params.prompt,
        promptImage: [
          { uri: await uriOf(wide.path, 'image/png'), position: 'first' },
          { uri: await uriOf(end.path, 'image/jpeg'), position: 'last' },
        ],
        ratio: '1920:1080',
        duration: 6,
        audio: false,
      },
    });
    assertSignedCalls(target);
    assertKeylessDownload(target);
  });

  it('asks veo3.1 for sound with generate_audio, and keeps its track through conforming', async () => {
    const target = await fake();
    const job = runwayJob({ quality: '720p', ratio: '16:9', duration: 4, generateAudio: true });
    await engineFor(target, 'veo3.1').render(job, renderContext());
    assert.equal((created(target).body as { audio?: unknown }).audio, true);
    const facts = await assertContractVideo(job);
    assert.ok(facts.audio, "Runway's track survives conforming");
  });

  it("sends image, video and audio references to seedance2 at 640:640 with audio: true; the model's own track is kept", async () => {
    const target = await fake();
    const job = runwayJob({
      model: 'videogen-2.0-reference-to-video',
      quality: '720p',
      ratio: '1:1',
      images: [wide],
      videos: [clip],
      audios: [tone],
      generateAudio: true,
    });
    const ctx = renderContext();
    await engineFor(target, 'seedance2').render(job, ctx);
    await assertContractVideo(job);
    assertProgressRisesToOne(ctx.progress, { strictly: true });
    assert.deepEqual(created(target), {
      path: '/v1/text_to_video',
      body: {
        model: 'seedance2',
        promptText: job.params.prompt,
        ratio: '640:640',
        duration: 4,
        audio: true,
        references: [{ uri: await uriOf(wide.path, 'image/png') }],
        referenceVideos: [{ type: 'video', uri: await uriOf(clip, 'video/mp4') }],
        referenceAudio: [{ type: 'audio', uri: await uriOf(tone, 'audio/wav') }],
      },
    });
    assertSignedCalls(target);
    assertKeylessDownload(target);
  });

  it('asks seedance2 for no sound when the job has generate_audio false', async () => {
    const target = await fake();
    const job = runwayJob({
      model: 'videogen-2.0-fast-reference-to-video',
      quality: '480p',
      ratio: '16:9',
      images: [wide],
    });
    await engineFor(target, 'seedance2').render(job, renderContext());
    await assertContractVideo(job);
    assert.deepEqual(created(target), {
      path: '/v1/text_to_video',
      body: {
        model: 'seedance2',
        promptText: job.params.prompt,
        ratio: '864:496',
        duration: 4,
        audio: false,
        references: [{ uri: await uriOf(wide.path, 'image/png') }],
      },
    });
  });
});

describe('runway engine: inputs a model cannot take', () => {
  it('with unsupported_inputs: drop, sends gen4_turbo the first frame alone', async () => {
    const target = await fake();
    const job = runwayJob({ model: 'videogen-2.0-image-to-video', images: [wide, end] });
    await engineFor(target, 'gen4_turbo', { unsupported_inputs: 'drop' }).render(job, renderContext());
    await assertContractVideo(job);
    assert.deepEqual(created(target), {
      path: '/v1/image_to_video',
      body: {
        model: 'gen4_turbo',
        promptText: job.params.prompt,
        promptImage: await uriOf(wide.path, 'image/png'),
        ratio: '1280:720',
        duration: 4,
        seed: 4242,
      },
    });
  });

  it('with unsupported_inputs: drop, sends a reference job to veo3.1 as text only; the audio still becomes the soundtrack', async () => {
    const target = await fake();
    const job = runwayJob({
      model: 'videogen-2.0-reference-to-video',
      quality: '720p',
      ratio: '9:16',
      images: [wide],
      videos: [clip],
      audios: [tone],
    });
    await engineFor(target, 'veo3.1', { unsupported_inputs: 'drop' }).render(job, renderContext());
    await assertContractVideo(job);
    assert.deepEqual(created(target), {
      path: '/v1/text_to_video',
      body: {
        model: 'veo3.1',
        promptText: job.params.prompt,
        ratio: '720:1280',
        duration: 4,
        audio: false,
      },
    });
  });

  it('without drop, fails what the model cannot take with invalid_asset before any call', async () => {
    const target = await fake();
    const cases = [
      {
        model: 'gen4_turbo' as const,
        job: runwayJob({ model: 'videogen-2.0-image-to-video', images: [wide, end] }),
        why: 'takes a first frame but no last frame: send one image.',
      },
      {
        model: 'gen4.5' as const,
        job: runwayJob({ model: 'videogen-2.0-reference-to-video', images: [wide] }),
        why: 'takes no reference images; this request has 1.',
      },
      {
        model: 'veo3.1' as const,
        job: runwayJob({ model: 'videogen-2.0-reference-to-video', videos: [clip] }),
        why: 'takes no reference videos; this request has 1.',
      },
    ];
    for (const { model, job, why } of cases) {
      const failure = await taskFailure(engineFor(target, model).render(job, renderContext()));
      assert.equal(failure.code, 'invalid_asset');
      assert.equal(
        failure.message,
        `runway engine "rw-${model}": ${job.model.id} is rendered by the engine "rw-${model}", which ${why}`,
      );
    }
    assert.deepEqual(target.requests, []);
  });

  it('fails an image over the 5 MB data: URI limit with invalid_asset before any call', async () => {
    const target = await fake();
    // Just over: 3,932,161 bytes are 5,242,884 characters of base64.
    const huge = join(dir, 'huge.png');
    await writeFile(huge, Buffer.alloc(3_932_161, 0x7f));
    const job = runwayJob({ model: 'videogen-2.0-image-to-video', images: [huge] });
    const failure = await taskFailure(engineFor(target, 'gen4.5').render(job, renderContext()));
    assert.equal(failure.code, 'invalid_asset');
    assert.match(
      failure.message,
      /^runway engine "rw-gen4\.5": image 1 is .+ as a data: URI; Runway takes image inputs sent inline up to .+\.$/,
    );
    assert.deepEqual(target.requests, []);
  });

  it('fails a text job on gen4_turbo, which makes video only from an image, with invalid_asset before any call', async () => {
    const target = await fake();
    const failure = await taskFailure(engineFor(target, 'gen4_turbo').render(runwayJob(), renderContext()));
    assert.equal(failure.code, 'invalid_asset');
    assert.equal(
      failure.message,
      `runway engine "rw-gen4_turbo": Runway's gen4_turbo makes videos only from a first-frame image, and this text-mode job has none; route videogen-2.0-text-to-video to an engine whose model takes text alone (gen4.5, veo3.1, seedance2).`,
    );
    assert.deepEqual(target.requests, []);
  });
});

describe("runway engine: the task and Runway's answers", () => {
  it('retries a 429 with Retry-After: 1 and then a 503 on create, then succeeds with one task', async () => {
    const target = await fake();
    target.busyCreates.push({ status: 429, headers: { 'retry-after': '1' } }, { status: 503 });
    const job = runwayJob();
    const started = Date.now();
    await engineFor(target, 'gen4.5').render(job, renderContext());
    // The first backoff is at most 0.5 s: a second or more is Runway's Retry-After honoured.
    assert.ok(Date.now() - started >= 1000, 'waited as Retry-After said');
    await assertContractVideo(job);
    assert.deepEqual(
      methods(target, 'POST').map((call) => call.status),
      [429, 503, 200],
    );
    assert.equal(target.creates.length, 1);
  });

  it('retries a 502 while polling, and follows the task to its end', async () => {
    const target = await fake();
    target.busyPolls.push({ status: 502 });
    const job = runwayJob();
    const ctx = renderContext();
    await engineFor(target, 'gen4.5').render(job, ctx);
    await assertContractVideo(job);
    assertProgressRisesToOne(ctx.progress, { strictly: true });
    const polls = methods(target, 'GET').map((call) => call.status);
    assert.equal(polls[0], 502);
    assert.ok(polls.length > 1 && polls.slice(1).every((status) => status === 200), polls.join(' '));
    assert.equal(target.creates.length, 1);
  });

  it('gives up with upstream_unavailable when the daily quota is spent (429 on every create)', async () => {
    const target = await fake();
    target.dailyGenerations = 0;
    const failure = await taskFailure(
      engineFor(target, 'gen4.5').render(runwayJob(), renderContext(undefined, { deadlineMs: 1000 })),
    );
    assert.equal(failure.code, 'upstream_unavailable');
    assert.match(
      failure.message,
      /^runway engine "rw-gen4\.5": POST \/v1\/text_to_video answered HTTP 429: \{"error":"You have exceeded the maximum number of generations for this model in the last 24 hours\."\} \(gave up after \d+ attempts?\)$/,
    );
    assert.deepEqual(target.creates, []);
    assert.deepEqual(methods(target, 'GET'), []);
  });

  for (const [failureCode, failure] of [
    ['SAFETY.INPUT.TEXT', 'Your prompt was rejected by our content moderation system.'],
    ['INPUT_PREPROCESSING.SAFETY.TEXT', 'Your prompt did not pass our content moderation checks.'],
  ] as const) {
    it(`fails a moderation failure (${failureCode}) with upstream_refused and Runway's message, not retried`, async () => {
      const target = await fake();
      target.outcome = { kind: 'fail', failure, failureCode };
      const failed = await taskFailure(engineFor(target, 'gen4.5').render(runwayJob(), renderContext()));
      assert.equal(failed.code, 'upstream_refused');
      assert.equal(
        failed.message,
        `runway engine "rw-gen4.5": Runway refused the task: ${failure} (${failureCode})`,
      );
      assert.equal(target.creates.length, 1);
      assert.deepEqual(methods(target, 'DELETE'), []);
      assert.deepEqual(target.downloads, []);
    });
  }

  it('fails any other failure with upstream_error and Runway’s message and code', async () => {
    const target = await fake();
    target.outcome = {
      kind: 'fail',
      failure: 'An unexpected error occurred while generating the video.',
      failureCode: 'INTERNAL.BAD_OUTPUT.CODE01',
    };
    const failed = await taskFailure(engineFor(target, 'gen4.5').render(runwayJob(), renderContext()));
    assert.equal(failed.code, 'upstream_error');
    assert.equal(
      failed.message,
      'runway engine "rw-gen4.5": Runway failed the task: An unexpected error occurred while generating the video. (INTERNAL.BAD_OUTPUT.CODE01)',
    );
    assert.equal(target.creates.length, 1);
    assert.deepEqual(methods(target, 'DELETE'), []);
  });

  it("fails with upstream_error quoting Runway's 400 when it refuses the body, sent once", async () => {
    const target = await fake();
    // Runway takes at most 1000 characters of prompt on gen4.5; the engine leaves that rule to Runway.
    const job = runwayJob({ prompt: 'a kite '.repeat(150) });
    const failed = await taskFailure(engineFor(target, 'gen4.5').render(job, renderContext()));
    assert.equal(failed.code, 'upstream_error');
    assert.match(
      failed.message,
      /^runway engine "rw-gen4\.5": POST \/v1\/text_to_video answered HTTP 400: \{"error":"Validation of body failed","issues":\[\{"origin":"string","code":"too_big","maximum":1000,"path":\["promptText"\]/,
    );
    assert.equal(failed.message.includes(KEY), false);
    assert.deepEqual(
      methods(target, 'POST').map((call) => call.status),
      [400],
    );
    assert.deepEqual(target.creates, []);
  });
});

describe('runway engine: stopping', () => {
  /** The one DELETE sent, which must have cancelled the task it names. */
  function assertCancelledUpstream(target: FakeRunwayServer): void {
    const deletes = methods(target, 'DELETE');
    assert.equal(deletes.length, 1, 'one DELETE');
    assert.equal(deletes[0]?.status, 204);
    const id = deletes[0]?.path.replace('/v1/tasks/', '');
    assert.deepEqual(target.cancelled, [id]);
    assert.deepEqual(target.unfinished, []);
    assert.deepEqual(target.downloads, []);
  }

  it('cancels the task upstream with DELETE when the render is aborted', async () => {
    const target = await fake();
    target.outcome = { kind: 'never-finish' };
    const controller = new AbortController();
    const reason = new Error('cancelled by the client');
    // Aborted on the first progress: the task is then running upstream.
    const ctx = renderContext(controller.signal, { onProgress: () => controller.abort(reason) });
    await assert.rejects(engineFor(target, 'gen4.5').render(runwayJob(), ctx), (error) => error === reason);
    assertCancelledUpstream(target);
  });

  it('cancels the task upstream with DELETE when its time limit runs out, and fails with timeout', async () => {
    const target = await fake();
    target.outcome = { kind: 'never-finish' };
    const failure = await taskFailure(
      engineFor(target, 'gen4.5').render(runwayJob(), renderContext(undefined, { deadlineMs: 200 })),
    );
    assert.equal(failure.code, 'timeout');
    assert.match(failure.message, /still (queued|running) upstream when the task's time limit ran out/);
    assertCancelledUpstream(target);
  });
});

describe('runway engine: check()', () => {
  it('passes with a good key: GET /v1/organization, nothing created', async () => {
    const target = await fake();
    await engineFor(target, 'gen4.5').check(new AbortController().signal);
    assert.deepEqual(
      target.requests.map((r) => [r.method, r.path, r.status]),
      [['GET', '/v1/organization', 200]],
    );
    assertSignedCalls(target);
    assert.deepEqual(target.creates, []);
  });

  it('fails with a refused key, saying so without either key', async () => {
    const target = await fake();
    const error = await checkError(engineFor(target, 'gen4.5', { api_key: WRONG_KEY }));
    assert.match(
      error.message,
      /^runway engine "rw-gen4\.5": GET \/v1\/organization answered HTTP 401: \{"error":"Invalid API key\. Check that the key is valid and not disabled\."\}/,
    );
    assert.equal(error.message.includes(WRONG_KEY), false);
    assert.equal(error.message.includes(KEY), false);
    assert.equal(target.requests.length, 1, 'asked once');
  });

  it('fails with a version Runway does not accept, quoting its answer', async () => {
    const target = await fake();
    const error = await checkError(engineFor(target, 'gen4.5', { api_version: '2025-01-01' }));
    assert.match(
      error.message,
      /GET \/v1\/organization answered HTTP 400: \{"error":"The API version that was provided in the X-Runway-Version header is not valid\."/,
    );
    assert.equal(target.requests[0]?.version, '2025-01-01');
    assert.equal(error.message.includes(KEY), false);
  });
});

describe('runway engine: capabilities by model', () => {
  const options = (model: RunwayModelId, extra: Partial<RunwayOptions> = {}): RunwayOptions => ({
    type: 'runway',
    api_key: KEY,
    model,
    ...extra,
  });
  const params = (images: number, videos = 0, audios = 0): GenerationParams => ({
    prompt: 'p',
    image_urls: Array.from({ length: images }, (_, i) => `https://example.test/${i}.png`),
    video_urls: Array.from({ length: videos }, (_, i) => `https://example.test/${i}.mp4`),
    audio_urls: Array.from({ length: audios }, (_, i) => `https://example.test/${i}.wav`),
    duration: 5,
    quality: '720p',
    aspect_ratio: '16:9',
    seed: 1,
    callback_url: null,
    generate_audio: false,
  });
  const image = getModel('videogen-2.0-image-to-video');
  const reference = getModel('videogen-2.0-reference-to-video');

  it('says what each model takes, and everything with unsupported_inputs: drop', () => {
    const none = { referenceImages: 0, referenceVideos: 0, referenceAudios: 0 };
    const expected: Record<RunwayModelId, unknown> = {
      gen4_turbo: { firstFrame: true, lastFrame: false, ...none, audio: false },
      'gen4.5': { firstFrame: true, lastFrame: false, ...none, audio: false },
      'veo3.1': { firstFrame: true, lastFrame: true, ...none, audio: true },
      'veo3.1_fast': { firstFrame: true, lastFrame: true, ...none, audio: true },
      seedance2: {
        firstFrame: true,
        lastFrame: true,
        referenceImages: 9,
        referenceVideos: 3,
        referenceAudios: 3,
        audio: true,
      },
      seedance2_fast: {
        firstFrame: true,
        lastFrame: true,
        referenceImages: 9,
        referenceVideos: 3,
        referenceAudios: 3,
        audio: true,
      },
      seedance2_mini: {
        firstFrame: true,
        lastFrame: true,
        referenceImages: 9,
        referenceVideos: 3,
        referenceAudios: 3,
        audio: true,
      },
      seedance2_5: {
        firstFrame: true,
        lastFrame: true,
        referenceImages: 30,
        referenceVideos: 10,
        referenceAudios: 10,
        audio: true,
      },
    };
    for (const [model, capabilities] of Object.entries(expected) as [RunwayModelId, unknown][]) {
      assert.deepEqual(capabilitiesOf(options(model)), capabilities, model);
      assert.deepEqual(capabilitiesOf(options(model, { unsupported_inputs: 'drop' })), ANY_INPUT, model);
    }
  });

  it('refuses at creation a last frame on the gen4 models and references beyond what each model takes', () => {
    const check = (model: RunwayModelId, given: GenerationParams, mode = reference) =>
      unsupportedInput(mode, given, capabilitiesOf(options(model)), `rw-${model}`);
    for (const model of ['gen4_turbo', 'gen4.5'] as const) {
      assert.equal(check(model, params(1), image), undefined);
      assert.equal(
        check(model, params(2), image)?.message,
        `videogen-2.0-image-to-video is rendered by the engine "rw-${model}", which takes a first frame but no last frame: send one image.`,
      );
      assert.equal(check(model, params(1))?.param, 'image_urls');
    }
    assert.equal(check('veo3.1', params(2), image), undefined);
    assert.equal(check('veo3.1', params(0, 0, 1))?.param, 'audio_urls');
    assert.equal(
      check('veo3.1_fast', params(1))?.message,
      'videogen-2.0-reference-to-video is rendered by the engine "rw-veo3.1_fast", which takes no reference images; this request has 1.',
    );
    assert.equal(check('seedance2', params(2), image), undefined);
    assert.equal(check('seedance2', params(9, 3, 3)), undefined);
    assert.equal(
      check('seedance2_fast', params(10))?.message,
      'videogen-2.0-reference-to-video is rendered by the engine "rw-seedance2_fast", which takes at most 9 reference images; this request has 10.',
    );
    assert.equal(check('seedance2_mini', params(1, 4))?.param, 'video_urls');
    assert.equal(check('seedance2', params(1, 0, 4))?.param, 'audio_urls');
    assert.equal(check('seedance2_5', params(30, 10, 10)), undefined);
    const sound = { ...params(1), generate_audio: true };
    assert.equal(check('gen4.5', sound, image)?.param, 'generate_audio', 'gen4.5 makes no sound');
    assert.equal(check('veo3.1', sound, image), undefined);
  });
});

describe('runway engine: the engines file', () => {
  it("builds the docs' example, and refuses at creation what each routed model cannot take", async () => {
    const file = join(dir, 'runway-engines.yaml');
    const config = parseEnginesConfig(await docsExample('runway'), file, { RUNWAYML_API_SECRET: KEY });
    const engines = createEngines(config);
    assert.equal(engines.size, 6);
    for (const engine of engines.values()) assert.ok(engine instanceof RunwayEngine, engine.name);
    const check = routedInputCheck(config);
    const base = {
      prompt: 'p',
      video_urls: [],
      audio_urls: [],
      duration: 5,
      quality: '720p' as const,
      aspect_ratio: '16:9' as const,
      seed: 1,
      callback_url: null,
      generate_audio: false,
    };
    const twoFrames = { ...base, image_urls: ['a', 'b'] };
    assert.equal(check.unsupported(getModel('videogen-2.0-image-to-video'), twoFrames), undefined);
    assert.equal(
      check.unsupported(getModel('videogen-2.0-fast-image-to-video'), twoFrames)?.param,
      'image_urls',
    );
    const references = { ...base, image_urls: ['a'], video_urls: ['v'], audio_urls: ['s'] };
    assert.equal(check.unsupported(getModel('videogen-2.0-fast-reference-to-video'), references), undefined);
  });

  it('refuses at start a model whose rules the engine does not know', async () => {
    const file = join(dir, 'runway-unknown-model.yaml');
    await writeFile(
      file,
      'engines:\n  rw:\n    type: runway\n    api_key: k\n    model: gen5\nmodels:\n  videogen-2.0-text-to-video: rw\n',
    );
    assert.throws(() => loadEnginesFile(file, {}), /\/engines\/rw\/model/);
  });
});

describe('the Runway fake refuses what Runway refuses', () => {
  const body = { model: 'gen4.5', promptText: 'a kite', ratio: '1280:720', duration: 5 };

  async function call(
    server: FakeRunwayServer,
    path: string,
    init: { method?: string; json?: unknown; headers?: Record<string, string> } = {},
  ): Promise<{ status: number; body: string }> {
    const response = await fetch(`${server.url}${path}`, {
      method: init.method ?? (init.json === undefined ? 'GET' : 'POST'),
      headers: {
        authorization: `Bearer ${KEY}`,
        'x-runway-version': VERSION,
        ...(init.json === undefined ? {} : { 'content-type': 'application/json' }),
        ...init.headers,
      },
      body: init.json === undefined ? undefined : JSON.stringify(init.json),
    });
    return { status: response.status, body: await response.text() };
  }

  it('refuses an `audio` that is not a boolean, and `audio` for a model that takes none', async () => {
    const server = await fake();
    const veo = { model: 'veo3.1', promptText: 'a kite', ratio: '1280:720', duration: 4 };
    for (const audio of ['true', 1, null]) {
      const answer = await call(server, '/v1/text_to_video', { json: { ...veo, audio } });
      assert.equal(answer.status, 400, `audio: ${JSON.stringify(audio)}`);
    }
    assert.equal((await call(server, '/v1/text_to_video', { json: { ...body, audio: true } })).status, 400);
  });

  it('refuses a wrong key and a missing or wrong version', async () => {
    const server = await fake();
    assert.equal(
      (await call(server, '/v1/organization', { headers: { authorization: 'Bearer key_x' } })).status,
      401,
    );
    assert.equal((await call(server, '/v1/organization', { headers: { authorization: KEY } })).status, 401);
    const missing = await fetch(`${server.url}/v1/organization`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    assert.equal(missing.status, 400);
    const wrong = await call(server, '/v1/organization', { headers: { 'x-runway-version': '2025-01-01' } });
    assert.deepEqual(
      [wrong.status, JSON.parse(wrong.body).error],
      [400, 'The API version that was provided in the X-Runway-Version header is not valid.'],
    );
  });

  it("refuses bodies outside each model's branch", async () => {
    const server = await fake();
    const bigImage = `data:image/png;base64,${'A'.repeat(5_242_880)}`;
    const refused: [string, unknown, RegExp][] = [
      ['/v1/text_to_video', { ...body, motion: 'slow' }, /unrecognized_keys/],
      ['/v1/text_to_video', { ...body, ratio: '1104:832' }, /invalid_value/],
      ['/v1/text_to_video', { ...body, duration: 11 }, /too_big/],
      ['/v1/text_to_video', { ...body, duration: 4.5 }, /expected int/],
      ['/v1/text_to_video', { ...body, model: 'gen4_turbo' }, /No matching discriminator/],
      ['/v1/text_to_video', { ...body, model: 'veo3.1', duration: 5 }, /invalid_value/],
      ['/v1/text_to_video', { ...body, model: 'veo3.1', duration: 4, seed: 1 }, /unrecognized_keys/],
      ['/v1/text_to_video', { model: 'gen4.5', promptText: 'a kite', ratio: '1280:720' }, /"duration"/],
      [
        '/v1/image_to_video',
        { ...body, model: 'gen4_turbo', ratio: '1280:768', promptImage: 'https://example.com/a.jpg' },
        /invalid_value/,
      ],
      ['/v1/image_to_video', { ...body, promptImage: bigImage }, /too_big/],
      ['/v1/image_to_video', { ...body, promptImage: 'http://example.com/a.jpg' }, /HTTPS URL/],
      ['/v1/image_to_video', { ...body, promptImage: 'https://10.0.0.1/a.jpg' }, /hosted on a domain/],
      [
        '/v1/image_to_video',
        { ...body, promptImage: [{ uri: 'https://example.com/a.jpg', position: 'last' }] },
        /invalid_value/,
      ],
      [
        '/v1/image_to_video',
        {
          ...body,
          model: 'veo3.1',
          duration: 4,
          promptImage: [{ uri: 'https://example.com/a.jpg', position: 'last' }],
        },
        /only a last frame/,
      ],
    ];
    for (const [path, json, why] of refused) {
      const answer = await call(server, path, { json });
      assert.equal(answer.status, 400, `${path} ${JSON.stringify(json).slice(0, 200)}`);
      assert.match(answer.body, why);
      assert.match(answer.body, /"error":"Validation of body failed"/);
    }
    const form = await call(server, '/v1/text_to_video', {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(form.status, 400);
    assert.deepEqual(server.creates, []);
  });

  it('cancels a running task with 204, then knows it no more (404); refuses other ids and methods', async () => {
    const server = await fake();
    server.outcome = { kind: 'never-finish' };
    const { id } = JSON.parse((await call(server, '/v1/text_to_video', { json: body })).body) as {
      id: string;
    };
    assert.equal((await call(server, `/v1/tasks/${id}`)).status, 200);
    assert.equal((await call(server, `/v1/tasks/${id}`, { method: 'DELETE' })).status, 204);
    assert.deepEqual(server.cancelled, [id]);
    const gone = await call(server, `/v1/tasks/${id}`);
    assert.deepEqual([gone.status, gone.body], [404, '{"error":"Could not find Task"}']);
    assert.equal((await call(server, `/v1/tasks/${id}`, { method: 'DELETE' })).status, 404);
    assert.equal((await call(server, '/v1/tasks/not-a-uuid')).status, 400);
    assert.equal((await call(server, '/v1/text_to_video')).status, 405);
  });
});

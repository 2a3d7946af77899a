/**
 * The `fal` engine against the strict fake of fal.ai's queue and Seedance (test/fakes/fal-server.ts), over real
 * HTTP: what it sends for each mode, that results are conformed exactly, retries, refusals, failures, upstream
 * cancel, the key check, the capabilities its templates declare, and the engines-file example of the docs.
 * Then what the fake itself refuses, called directly, since a fake proves only what it refuses.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ANY_INPUT, unsupportedInput } from '../src/domain/engine-capabilities.js';
import { TaskFailure } from '../src/domain/errors.js';
import { getModel } from '../src/domain/models.js';
import { createEngines } from '../src/engines/create-engines.js';
import { capabilitiesOf, type EngineOptions } from '../src/engines/engine-types.js';
import { EnginesFileError, parseEnginesConfig } from '../src/engines/engines-file.js';
import { FalEngine } from '../src/engines/fal/fal-engine.js';
import type { FalOptions } from '../src/engines/fal/fal-options.js';
import {
  FakeFalServer,
  SEEDANCE_15_T2V,
  SEEDANCE_FAST_T2V,
  SEEDANCE_I2V,
  SEEDANCE_T2V,
} from './fakes/fal-server.js';
import { docsExample } from './helpers/docs-examples.js';
import { type GridAssets, writeGridAssets } from './helpers/engine-grid.js';
import {
  assertContractVideo,
  assertProgressRisesToOne,
  jobMaker,
  renderContext,
} from './helpers/render-jobs.js';
import { until } from './helpers/until.js';

const KEY = '6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b:8e3f1a9c5d7b2e4f6a8c0b1d3e5f7a9c';
const WRONG_KEY = '6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b:00000000000000000000000000000000';
const SECRET = KEY.split(':')[1] as string;

const SEEDANCE_LISTS = {
  durations: [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
  resolutions: ['480p', '720p', '1080p'],
  aspect_ratios: ['21:9', '16:9', '4:3', '1:1', '3:4', '9:16'],
};
const T2V_INPUT = {
  prompt: '{{prompt}}',
  duration: '{{duration|text}}',
  resolution: '{{resolution}}',
  aspect_ratio: '{{aspect_ratio}}',
  seed: '{{seed}}',
  enable_safety_checker: true,
};
const I2V_INPUT = {
  prompt: '{{prompt}}',
  image_url: '{{image}}',
  duration: '{{duration|text}}',
  resolution: '{{resolution}}',
  aspect_ratio: '{{aspect_ratio}}',
  seed: '{{seed}}',
  camera_fixed: false,
};

let dir: string;
let assets: GridAssets;
let server: FakeFalServer;
const servers: FakeFalServer[] = [];

async function fake(): Promise<FakeFalServer> {
  const started = await FakeFalServer.start({ apiKey: KEY, cacheDir: join(dir, 'cache') });
  servers.push(started);
  return started;
}

function engineFor(target: FakeFalServer, options: Partial<FalOptions> = {}): FalEngine {
  return new FalEngine(
    'seedance',
    {
      type: 'fal',
      base_url: target.url,
      api_key: KEY,
      model: SEEDANCE_T2V,
      input: T2V_INPUT,
      poll_interval_ms: 10,
      ...SEEDANCE_LISTS,
      ...options,
    },
    { baseDir: dir },
  );
}

const i2v = (options: Partial<FalOptions> = {}) =>
  engineFor(server, { model: SEEDANCE_I2V, input: I2V_INPUT, ...options });

const falJob = jobMaker(() => dir, {
  taskPrefix: 'task-fal',
  prompt: 'a lighthouse on a cliff at dusk, waves rolling in',
  duration: 4,
  seed: 1234,
});

async function dataUrl(path: string, type: string): Promise<string> {
  return `data:${type};base64,${(await readFile(path)).toString('base64')}`;
}

async function taskFailure(promise: Promise<unknown>): Promise<TaskFailure> {
  const error = await promise.then(
    () => assert.fail('expected the render to fail'),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof TaskFailure, `a TaskFailure, got ${String(error)}`);
  return error;
}

/** The input of the fake's `index`th submit. */
function submitted(target: FakeFalServer, index: number): Record<string, unknown> {
  const submit = target.submits[index];
  assert.ok(submit, `submit ${index} was received`);
  return submit.input as Record<string, unknown>;
}

function pathsOf(target: FakeFalServer, method: string): string[] {
  return target.requests.filter((r) => r.method === method).map((r) => r.path);
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-fal-engine-'));
  assets = await writeGridAssets(dir);
  server = await fake();
});

after(async () => {
  await Promise.all(servers.map((target) => target.close()));
  await rm(dir, { recursive: true, force: true });
});

describe('fal engine: each mode', () => {
  it('sends a text job as the template fills it, mapped to what Seedance takes, and conforms the result', async () => {
    const job = falJob({ quality: '480p', ratio: '21:9', duration: 13, seed: 7 });
    const ctx = renderContext();
    const before = server.submits.length;
    await engineFor(server).render(job, ctx);
    await assertContractVideo(job);
    assertProgressRisesToOne(ctx.progress);

    const [submit] = server.submits.slice(before);
    assert.equal(submit?.model, SEEDANCE_T2V);
    assert.equal(submit?.authorization, `Key ${KEY}`);
    assert.equal(submit?.contentType, 'application/json');
    assert.deepEqual(submit?.input, {
      prompt: job.params.prompt,
      duration: '12',
      resolution: '480p',
      aspect_ratio: '21:9',
      seed: 7,
      enable_safety_checker: true,
    });
    // Status and result under owner/app only, as the queue returned them.
    assert.ok(
      pathsOf(server, 'GET').some((path) => /^\/fal-ai\/bytedance\/requests\/[^/]+\/status$/.test(path)),
    );
    assert.ok(pathsOf(server, 'GET').some((path) => /^\/fal-ai\/bytedance\/requests\/[^/]+$/.test(path)));
    for (const request of server.requests) assert.equal(request.authorization, `Key ${KEY}`);
    // The video comes from the media host, without the key.
    assert.ok(server.mediaRequests.length > 0);
    for (const request of server.mediaRequests) assert.equal(request.authorization, undefined);
  });

  it('sends an image job’s first frame inline, its shape as the nearest ratio, and conforms the result', async () => {
    const job = falJob({
      model: 'videogen-2.0-image-to-video',
      quality: '480p',
      ratio: 'adaptive',
      images: [assets.tall],
      duration: 4,
    });
    const before = server.submits.length;
    await i2v().render(job, renderContext());
    await assertContractVideo(job);
    assert.deepEqual(server.submits[before]?.input, {
      prompt: job.params.prompt,
      image_url: await dataUrl(assets.tall.path, 'image/jpeg'),
      duration: '4',
      resolution: '480p',
      aspect_ratio: '3:4',
      seed: 1234,
      camera_fixed: false,
    });
  });

  it('sends a reference job routed to image-to-video with its first image as the first frame', async () => {
    const job = falJob({
      model: 'videogen-2.0-fast-reference-to-video',
      quality: '480p',
      ratio: '1:1',
      images: [assets.wide],
      duration: 5,
      seed: 99,
    });
    const before = server.submits.length;
    await i2v().render(job, renderContext());
    await assertContractVideo(job);
    const input = submitted(server, before);
    assert.equal(input.image_url, await dataUrl(assets.wide.path, 'image/png'));
    assert.deepEqual(
      [input.duration, input.resolution, input.aspect_ratio, input.seed],
      ['5', '480p', '1:1', 99],
    );
  });

  it("passes generate_audio through {{generate_audio}} and keeps the model's track; false has none", async () => {
    const v15 = {
      model: SEEDANCE_15_T2V,
      input: { ...T2V_INPUT, generate_audio: '{{generate_audio}}' },
      durations: [4, 5, 6, 7, 8, 9, 10, 11, 12],
    };
    const loud = falJob({ prompt: 'a brass band in the rain', quality: '480p', generateAudio: true });
    const quiet = falJob({ prompt: 'a quiet library', quality: '480p', generateAudio: false });
    const before = server.submits.length;
    for (const job of [loud, quiet]) await engineFor(server, v15).render(job, renderContext());
    assert.equal(submitted(server, before).generate_audio, true);
    assert.equal(submitted(server, before + 1).generate_audio, false);
    assert.ok((await assertContractVideo(loud)).audio, "the model's soundtrack survives conforming");
    assert.equal((await assertContractVideo(quiet)).audio, undefined);
    assert.equal(capabilitiesOf({ type: 'fal', api_key: KEY, ...v15 }).audio, true);
    assert.equal(
      capabilitiesOf({ type: 'fal', api_key: KEY, model: SEEDANCE_T2V, input: T2V_INPUT }).audio,
      false,
    );

    // The fake, as the model's app, refuses a generate_audio that is not a boolean.
    const textual = { ...v15, input: { ...v15.input, generate_audio: '{{generate_audio|text}}' } };
    const job = falJob({ prompt: 'a brass band, as text', quality: '480p', generateAudio: true });
    const failure = await taskFailure(engineFor(server, textual).render(job, renderContext()));
    assert.match(failure.message, /generate_audio/);
  });

  it('with unsupported_inputs: drop, leaves out what the template has no place for and renders the rest', async () => {
    const job = falJob({
      model: 'videogen-2.0-reference-to-video',
      images: [assets.wide, assets.tall],
      audios: [assets.audio],
    });
    const before = server.submits.length;
    await i2v({ unsupported_inputs: 'drop' }).render(job, renderContext());
    await assertContractVideo(job);
    const input = submitted(server, before);
    assert.equal(input.image_url, await dataUrl(assets.wide.path, 'image/png'));
    assert.equal(JSON.stringify(input).includes(await dataUrl(assets.tall.path, 'image/jpeg')), false);
  });
});

describe('fal engine: the queue and the model answer', () => {
  it('retries a 429 with Retry-After and a 503 on submit and on status, then succeeds', async () => {
    const target = await fake();
    target.busyAnswers.push(
      { route: 'submit', status: 429, headers: { 'retry-after': '0' } },
      { route: 'submit', status: 503 },
      { route: 'status', status: 503 },
    );
    const job = falJob();
    await engineFor(target).render(job, renderContext());
    await assertContractVideo(job);
    const posts = target.requests.filter((r) => r.method === 'POST').map((r) => r.status);
    assert.deepEqual(posts, [429, 503, 200]);
    assert.equal(target.submits.length, 1);
    assert.ok(target.requests.some((r) => r.path.endsWith('/status') && r.status === 503));
  });

  it('fails a content-policy refusal with upstream_refused and fal’s message, submitted once, nothing cancelled', async () => {
    const target = await fake();
    const job = falJob({ prompt: 'a forbidden scene' });
    const failure = await taskFailure(engineFor(target).render(job, renderContext()));
    assert.equal(failure.code, 'upstream_refused');
    assert.equal(
      failure.message,
      'fal engine "seedance": fal\'s content checker refused the request: prompt: The content was flagged by a content checker. [content_policy_violation (violence)]',
    );
    assert.equal(target.submits.length, 1);
    assert.deepEqual(target.cancels, []);
  });

  it('fails a runner failure with upstream_error, quoting fal, without retrying the completed request', async () => {
    const target = await fake();
    target.outcome = 'fail';
    const failure = await taskFailure(engineFor(target).render(falJob(), renderContext()));
    assert.equal(failure.code, 'upstream_error');
    assert.match(failure.message, /HTTP 503 \(runner_disconnected\): The runner disconnected/);
    assert.equal(target.requests.filter((r) => /requests\/[^/]+$/.test(r.path)).length, 1);
    assert.deepEqual(target.cancels, []);
  });

  it('reports the model’s validation of a wrong template as upstream_error: the queue took it, the model did not', async () => {
    const target = await fake();
    const input = { ...T2V_INPUT, duration: '{{duration}}' };
    const failure = await taskFailure(engineFor(target, { input }).render(falJob(), renderContext()));
    assert.equal(failure.code, 'upstream_error');
    assert.match(
      failure.message,
      /HTTP 422: duration: Input should be '2', '3', .* or '12' \[literal_error\]/,
    );
    assert.equal(submitted(target, 0).duration, 4, 'submitted as it was');
  });

  it('fails with upstream_error when the output has no video where result_path says', async () => {
    const failure = await taskFailure(
      engineFor(server, { result_path: 'videos.0.url' }).render(falJob(), renderContext()),
    );
    assert.equal(failure.code, 'upstream_error');
    assert.match(failure.message, /the model's output has no video URL at videos\.0\.url: \{"video":/);
  });

  it('uses only URLs under base_url: foreign ones are rebuilt on base_url, so the key goes nowhere else', async () => {
    const target = await fake();
    target.urlOrigin = target.mediaUrl;
    const job = falJob();
    await engineFor(target).render(job, renderContext());
    await assertContractVideo(job);
    assert.deepEqual(
      target.mediaRequests.map((r) => [r.method, r.authorization]),
      [['GET', undefined]],
    );
    assert.ok(target.requests.some((r) => r.path.endsWith('/status') && r.status === 200));
  });

  it('asks for the result under the full model path when owner/app answers 404 (as seen for Seedance)', async () => {
    const target = await fake();
    target.resultAtFullPath = true;
    const job = falJob();
    await engineFor(target).render(job, renderContext());
    await assertContractVideo(job);
    const results = target.requests.filter((r) => r.method === 'GET' && /requests\/[^/]+$/.test(r.path));
    assert.deepEqual(
      results.map((r) => [r.path.startsWith(`/${SEEDANCE_T2V}/`), r.status]),
      [
        [false, 404],
        [true, 200],
      ],
    );
  });
});

describe('fal engine: stopping', () => {
  it('cancels the request upstream when the render is aborted', async () => {
    const target = await fake();
    target.outcome = 'never-finish';
    const controller = new AbortController();
    const reason = new Error('cancelled by the client');
    const rendering = engineFor(target).render(falJob(), renderContext(controller.signal));
    await until(() => target.requests.some((r) => r.path.endsWith('/status')), 'a status poll');
    controller.abort(reason);
    await assert.rejects(rendering, (error) => error === reason);
    assert.equal(target.cancels.length, 1);
    assert.equal(target.cancels[0]?.status, 'CANCELLATION_REQUESTED');
    assert.deepEqual(target.running, []);
    const cancel = target.requests.find((r) => r.path.endsWith('/cancel'));
    assert.equal(cancel?.method, 'PUT');
    assert.match(cancel?.path ?? '', /^\/fal-ai\/bytedance\/requests\/[^/]+\/cancel$/);
  });

  it('cancels the request upstream when the task’s time limit runs out, and fails with timeout', async () => {
    const target = await fake();
    target.outcome = 'never-finish';
    const failure = await taskFailure(
      engineFor(target).render(falJob(), renderContext(undefined, { deadlineMs: 300 })),
    );
    assert.equal(failure.code, 'timeout');
    assert.deepEqual(
      target.cancels.map((c) => c.status),
      ['CANCELLATION_REQUESTED'],
    );
    assert.deepEqual(target.running, []);
  });
});

describe('fal engine: check()', () => {
  it('passes with a good key: a made-up request id is not found', async () => {
    const target = await fake();
    await engineFor(target).check(new AbortController().signal);
    assert.equal(target.submits.length, 0, 'nothing submitted, nothing billed');
    const [request] = target.requests;
    assert.match(request?.path ?? '', /^\/fal-ai\/bytedance\/requests\/[0-9a-f-]{36}\/status$/);
    assert.equal(request?.status, 404);
  });

  it('fails with a refused key, saying so without the key', async () => {
    const error = await engineFor(server, { api_key: WRONG_KEY })
      .check(new AbortController().signal)
      .then(
        () => assert.fail('expected check() to fail'),
        (caught: unknown) => caught,
      );
    assert.ok(error instanceof Error);
    assert.match(
      error.message,
      /HTTP 401: \{"detail":"No user found for Key ID and Secret"\} \(fal refused the key\)/,
    );
    assert.equal(error.message.includes(WRONG_KEY.split(':')[1] as string), false);
    assert.equal(error.message.includes(SECRET), false);
  });

  it('fails a render with a refused key as upstream_error, the key kept out of the message', async () => {
    const failure = await taskFailure(
      engineFor(server, { api_key: WRONG_KEY }).render(falJob(), renderContext()),
    );
    assert.equal(failure.code, 'upstream_error');
    assert.match(failure.message, /answered HTTP 401/);
    assert.equal(failure.message.includes(WRONG_KEY), false);
  });
});

describe('fal engine: capabilities and the engines file', () => {
  const options = (input: Record<string, unknown>, extra: Partial<FalOptions> = {}): EngineOptions => ({
    type: 'fal',
    api_key: KEY,
    model: SEEDANCE_I2V,
    input,
    ...extra,
  });
  const params = (images: number, videos = 0) => ({
    prompt: 'p',
    image_urls: Array.from({ length: images }, (_, i) => `https://example.test/${i}.png`),
    video_urls: Array.from({ length: videos }, (_, i) => `https://example.test/${i}.mp4`),
    audio_urls: [],
    duration: 5,
    quality: '720p' as const,
    aspect_ratio: '16:9' as const,
    seed: 1,
    callback_url: null,
    generate_audio: false,
  });
  const image = getModel('videogen-2.0-image-to-video');
  const reference = getModel('videogen-2.0-reference-to-video');

  it('refuses at creation what the template has no place for', () => {
    const text = capabilitiesOf(options(T2V_INPUT));
    assert.equal(unsupportedInput(image, params(1), text, 'seedance-t2v')?.param, 'image_urls');
    const firstFrame = capabilitiesOf(options(I2V_INPUT));
    assert.equal(unsupportedInput(image, params(1), firstFrame, 'seedance-i2v'), undefined);
    assert.equal(
      unsupportedInput(image, params(2), firstFrame, 'seedance-i2v')?.message,
      'videogen-2.0-image-to-video is rendered by the engine "seedance-i2v", which takes a first frame but no last frame: send one image.',
    );
    assert.match(
      unsupportedInput(reference, params(2), firstFrame, 'x')?.message ?? '',
      /at most 1 reference image;/,
    );
    assert.equal(unsupportedInput(reference, params(1, 1), firstFrame, 'x')?.param, 'video_urls');
    const withEnd = capabilitiesOf(options({ ...I2V_INPUT, end_image_url: '{{last_image}}' }));
    assert.equal(unsupportedInput(image, params(2), withEnd, 'x'), undefined);
  });

  it('takes everything with unsupported_inputs: drop', () => {
    assert.deepEqual(capabilitiesOf(options(T2V_INPUT, { unsupported_inputs: 'drop' })), ANY_INPUT);
  });

  it('accepts the docs example, and builds engines that render through the queue', async () => {
    const config = parseEnginesConfig(await docsExample('fal-seedance'), 'engines.yaml', { FAL_KEY: KEY });
    assert.deepEqual([...config.engines.keys()].sort(), [
      'seedance-fast-i2v',
      'seedance-fast-t2v',
      'seedance-i2v',
      'seedance-t2v',
    ]);
    const fast = config.engines.get('seedance-fast-t2v') as FalOptions;
    assert.equal(fast.api_key, KEY);
    const pointed = {
      ...config,
      // Only the address and the polling change: the default 2 s between polls would be waited out here.
      engines: new Map([['seedance-fast-t2v', { ...fast, base_url: server.url, poll_interval_ms: 10 }]]),
    };
    const engine = createEngines(pointed).get('seedance-fast-t2v');
    const job = falJob({ model: 'videogen-2.0-fast-text-to-video', quality: '480p', ratio: '9:16' });
    const before = server.submits.length;
    await engine?.render(job, renderContext());
    await assertContractVideo(job);
    assert.equal(server.submits[before]?.model, SEEDANCE_FAST_T2V);
    assert.deepEqual(server.submits[before]?.input, {
      prompt: job.params.prompt,
      duration: '4',
      resolution: '480p',
      aspect_ratio: '9:16',
      seed: 1234,
      camera_fixed: false,
    });
  });

  it('refuses at start an unknown placeholder, a missing input and a model that is not an endpoint id', () => {
    const file = (engine: Record<string, unknown>) => ({
      engines: { seedance: { type: 'fal', api_key: KEY, model: SEEDANCE_T2V, input: T2V_INPUT, ...engine } },
      models: { 'videogen-2.0-text-to-video': 'seedance' },
    });
    const config = parseEnginesConfig(file({ input: { prompt: '{{promt}}' } }), 'engines.yaml', {});
    assert.throws(
      () => createEngines(config),
      /\/engines\/seedance: input: unknown placeholder \{\{promt\}\}/,
    );
    assert.throws(
      () => parseEnginesConfig(file({ input: undefined }), 'engines.yaml', {}),
      (error) => error instanceof EnginesFileError && /\/engines\/seedance\/input/.test(error.message),
    );
    assert.throws(
      () => parseEnginesConfig(file({ model: 'seedance' }), 'engines.yaml', {}),
      (error) => error instanceof EnginesFileError && /\/engines\/seedance\/model/.test(error.message),
    );
  });
});

describe('the fal fake refuses what fal refuses', () => {
  const call = (
    path: string,
    init: { method?: string; key?: string | null; authorization?: string; body?: string } = {},
  ) =>
    fetch(`${server.url}${path}`, {
      method: init.method ?? 'GET',
      headers: {
        ...(init.authorization !== undefined
          ? { authorization: init.authorization }
          : init.key === null
            ? {}
            : { authorization: `Key ${init.key ?? KEY}` }),
        ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: init.body,
    });
  const submit = (input: unknown, init: { key?: string | null; authorization?: string } = {}) =>
    call(`/${SEEDANCE_I2V}`, { method: 'POST', body: JSON.stringify(input), ...init });

  it('refuses a missing, Bearer, malformed or unknown key with 401', async () => {
    const input = { prompt: 'p', image_url: 'https://example.test/a.png' };
    for (const init of [{ key: null }, { authorization: `Bearer ${KEY}` }, { key: 'no-colon-here' }]) {
      const answer = await submit(input, init);
      assert.equal(answer.status, 401);
      assert.deepEqual(await answer.json(), {
        detail: "Invalid Key Authorization header format. Expected '<key_id>:<key_secret>'.",
      });
    }
    const wrong = await submit(input, { key: WRONG_KEY });
    assert.equal(wrong.status, 401);
    assert.deepEqual(await wrong.json(), { detail: 'No user found for Key ID and Secret' });
  });

  it('refuses a submit from a locked account with 403, and a body that is not a JSON object with 422', async () => {
    const target = await fake();
    target.locked = true;
    const locked = await fetch(`${target.url}/${SEEDANCE_T2V}`, {
      method: 'POST',
      headers: { authorization: `Key ${KEY}`, 'content-type': 'application/json' },
      body: '{"prompt":"p"}',
    });
    assert.equal(locked.status, 403);
    assert.match(
      ((await locked.json()) as { detail: string }).detail,
      /^User is locked\. Reason: Exhausted balance/,
    );
    const list = await call(`/${SEEDANCE_T2V}`, { method: 'POST', body: '["p"]' });
    assert.equal(list.status, 422);
  });

  it('takes any input at submit; the model refuses it when it runs, at the result (422 with loc, msg, type)', async () => {
    const answer = await submit({
      image_url: 'https://example.test/a.png',
      duration: 5,
      aspect_ratio: '2:1',
      extra: 1,
    });
    assert.equal(answer.status, 200);
    const queued = (await answer.json()) as Record<string, string>;
    assert.equal(queued.status, 'IN_QUEUE');
    assert.match(queued.status_url ?? '', /\/fal-ai\/bytedance\/requests\/[^/]+\/status$/);
    const statusPath = new URL(queued.status_url as string).pathname;
    const early = await call(new URL(queued.response_url as string).pathname);
    assert.equal(early.status, 400);
    const codes: number[] = [];
    for (let status = ''; status !== 'COMPLETED'; ) {
      const polled = await call(statusPath);
      codes.push(polled.status);
      status = ((await polled.json()) as { status: string }).status;
    }
    assert.deepEqual(codes, [202, 202, 200]);
    const result = await call(new URL(queued.response_url as string).pathname);
    assert.equal(result.status, 422);
    const { detail } = (await result.json()) as { detail: { loc: string[]; type: string; msg: string }[] };
    assert.deepEqual(
      detail.map((item) => [item.loc.join('.'), item.type]),
      [
        ['body.prompt', 'missing'],
        ['body.aspect_ratio', 'literal_error'],
        ['body.duration', 'literal_error'],
      ],
    );
    assert.equal(
      detail[2]?.msg,
      "Input should be '2', '3', '4', '5', '6', '7', '8', '9', '10', '11' or '12'",
    );
    const cancel = await call(new URL(queued.cancel_url as string).pathname, { method: 'PUT' });
    assert.equal(cancel.status, 400);
    assert.deepEqual(await cancel.json(), { status: 'ALREADY_COMPLETED' });
  });

  it('answers 405 for status under the full model path, 404 for an unknown request, 405 for cancel by GET', async () => {
    const answer = await submit({ prompt: 'p', image_url: 'https://example.test/a.png' });
    const { request_id: id } = (await answer.json()) as { request_id: string };
    assert.equal((await call(`/${SEEDANCE_I2V}/requests/${id}/status`)).status, 405);
    assert.equal(
      (await call('/fal-ai/bytedance/requests/00000000-0000-4000-8000-000000000000/status')).status,
      404,
    );
    assert.equal((await call(`/fal-ai/bytedance/requests/${id}/cancel`)).status, 405);
    const cancelled = await call(`/fal-ai/bytedance/requests/${id}/cancel`, { method: 'PUT' });
    assert.equal(cancelled.status, 202);
    assert.deepEqual(await cancelled.json(), { status: 'CANCELLATION_REQUESTED' });
  });
});

/**
 * The `gemini` engine (Google's Veo through the Gemini API) against the strict fake of test/fakes/gemini-server.ts
 * over real HTTP: what each mode sends, the mapping of frame, quality and duration, results conformed exactly,
 * retries (429 with RetryInfo, 5xx), refusals and failures, no upstream cancel (the API has none), the key
 * kept to its hosts and out of messages, `check()`, the capabilities, and the fake's own refusals.
 */
import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Agent } from 'undici';
import { ANY_INPUT, unsupportedInput } from '../src/domain/engine-capabilities.js';
import { TaskFailure } from '../src/domain/errors.js';
import type { GenerationParams } from '../src/domain/generation-request.js';
import { type BuiltInModelId, getModel } from '../src/domain/models.js';
import { createEngines } from '../src/engines/create-engines.js';
import type { EngineContext } from '../src/engines/engine-context.js';
import { capabilitiesOf, type EngineOptions } from '../src/engines/engine-types.js';
import { parseEnginesConfig } from '../src/engines/engines-file.js';
import { GeminiEngine } from '../src/engines/gemini/gemini-engine.js';
import { veoModel } from '../src/engines/gemini/gemini-models.js';
import type { GeminiOptions } from '../src/engines/gemini/gemini-options.js';
import { veoShape } from '../src/engines/gemini/veo-shape.js';
import {
  type FakeGeminiOptions,
  FakeGeminiServer,
  RAI_REASON,
  type RecordedSubmit,
} from './fakes/gemini-server.js';
import { docsExample } from './helpers/docs-examples.js';
import { type GridAssets, writeGridAssets } from './helpers/engine-grid.js';
import { writeTestImage } from './helpers/media-fixtures.js';
import { audioSeconds } from './helpers/mp4-facts.js';
import {
  assertContractVideo,
  assertProgressRisesToOne,
  type JobOptions,
  makeJob,
  renderContext,
} from './helpers/render-jobs.js';
import { until } from './helpers/until.js';

const KEY = 'AIzaSyTest-Qk7Vd2Lm9Rx4Pw8Hn3Jc6Bz1Yt5';

const V31 = 'veo-3.1-generate-preview';

let dir: string;
let assets: GridAssets;
/** A WebP picture (sent re-encoded as PNG) and a file with a PNG signature that is no picture. */
let webp: string;
let brokenPng: string;
let fake: FakeGeminiServer;
const fakes: FakeGeminiServer[] = [];

async function startFake(options: Partial<FakeGeminiOptions> = {}): Promise<FakeGeminiServer> {
  const server = await FakeGeminiServer.start({ cacheDir: join(dir, 'cache'), apiKey: KEY, ...options });
  fakes.push(server);
  return server;
}

function engineFor(
  server: FakeGeminiServer,
  options: Partial<GeminiOptions> = {},
  context: Partial<EngineContext> = {},
): GeminiEngine {
  return new GeminiEngine(
    'veo',
    { type: 'gemini', base_url: server.url, api_key: KEY, model: V31, poll_interval_ms: 5, ...options },
    { baseDir: dir, ...context },
  );
}

function job(options: JobOptions = {}) {
  return makeJob(dir, {
    taskPrefix: 'task-gemini',
    prompt: 'a paper boat drifts down a rainy street',
    ...options,
  });
}

async function taskFailure(promise: Promise<unknown>): Promise<TaskFailure> {
  const error = await promise.then(
    () => assert.fail('expected a failure'),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof TaskFailure, `a TaskFailure, got ${String(error)}`);
  return error;
}

function firstInstance(submit: RecordedSubmit | undefined): Record<string, unknown> {
  const instances = submit?.body.instances;
  assert.ok(Array.isArray(instances), 'a submit with instances');
  return instances[0] as Record<string, unknown>;
}

async function base64(path: string): Promise<string> {
  return (await readFile(path)).toString('base64');
}

/** The key (or one of `keys`) went in the header of every API call, and in no URL. */
function assertKeyKeptToHeaders(server: FakeGeminiServer, keys: readonly string[] = [KEY]): void {
  for (const request of server.requests) {
    assert.ok(!keys.some((key) => request.url.includes(key)), `no key in ${request.url}`);
    if (request.url.startsWith('/v1beta/')) assert.ok(keys.includes(request.apiKey ?? ''), request.url);
  }
}

/** Neither a cancel nor a delete reached the API (it has neither for Veo). */
function assertNoCancel(server: FakeGeminiServer): void {
  const cancels = server.requests.filter((r) => r.method === 'DELETE' || r.url.includes(':cancel'));
  assert.deepEqual(cancels, []);
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-gemini-engine-'));
  assets = await writeGridAssets(dir);
  webp = join(dir, 'webp-image');
  await writeTestImage(webp, { width: 400, height: 400, colour: [20, 160, 90], format: 'webp' });
  brokenPng = join(dir, 'broken-png');
  await writeFile(brokenPng, Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.alloc(64, 7)]));
  fake = await startFake();
});

after(async () => {
  await Promise.all(fakes.map((server) => server.close()));
  await rm(dir, { recursive: true, force: true });
});

describe('gemini engine: mapping onto Veo', () => {
  const shape = (
    model: string,
    quality: JobOptions['quality'],
    ratio: JobOptions['ratio'],
    duration: number,
    refs = false,
  ) => veoShape(job({ quality, ratio, duration }), veoModel(model), refs);

  it('asks for the orientation, 720p or 1080p at 8 s only, and the nearest duration', () => {
    assert.deepEqual(shape(V31, '480p', '16:9', 5), {
      aspectRatio: '16:9',
      resolution: '720p',
      durationSeconds: 6,
    });
    assert.deepEqual(shape(V31, '720p', '3:4', 4), {
      aspectRatio: '9:16',
      resolution: '720p',
      durationSeconds: 4,
    });
    assert.deepEqual(shape(V31, '720p', '1:1', 4).aspectRatio, '16:9');
    assert.deepEqual(shape(V31, '1080p', '21:9', 12), {
      aspectRatio: '16:9',
      resolution: '1080p',
      durationSeconds: 8,
    });
    assert.deepEqual(shape(V31, '1080p', '16:9', 7), {
      aspectRatio: '16:9',
      resolution: '1080p',
      durationSeconds: 8,
    });
    // A shorter 1080p job is made whole at 720p and scaled, not made for 8 s and cut.
    assert.deepEqual(shape(V31, '1080p', '16:9', 6), {
      aspectRatio: '16:9',
      resolution: '720p',
      durationSeconds: 6,
    });
    // Reference images need 8 s, which allows 1080p.
    assert.deepEqual(shape(V31, '1080p', '9:16', 4, true), {
      aspectRatio: '9:16',
      resolution: '1080p',
      durationSeconds: 8,
    });
    // Veo 3.0 makes 1080p in landscape only; Veo 2 takes no resolution and 5, 6 or 8 s.
    assert.equal(shape('veo-3.0-generate-001', '1080p', '9:16', 8).resolution, '720p');
    assert.equal(shape('veo-3.0-generate-001', '1080p', '16:9', 8).resolution, '1080p');
    assert.deepEqual(shape('veo-2.0-generate-001', '1080p', '16:9', 4), {
      aspectRatio: '16:9',
      resolution: undefined,
      durationSeconds: 5,
    });
  });

  it('declares what each model takes, and refuses the rest at creation unless told to drop it', () => {
    const options = (model: string, drop = false): GeminiOptions => ({
      type: 'gemini',
      api_key: KEY,
      model,
      ...(drop && { unsupported_inputs: 'drop' as const }),
    });
    assert.deepEqual(capabilitiesOf(options(V31)), {
      firstFrame: true,
      lastFrame: true,
      referenceImages: 3,
      referenceVideos: 0,
      referenceAudios: 0,
      audio: true,
    });
    assert.deepEqual(capabilitiesOf(options('veo-3.1-fast-generate-preview')), capabilitiesOf(options(V31)));
    for (const model of ['veo-3.0-generate-001', 'veo-3.0-fast-generate-001', 'veo-2.0-generate-001']) {
      assert.deepEqual(capabilitiesOf(options(model)), {
        firstFrame: true,
        lastFrame: false,
        referenceImages: 0,
        referenceVideos: 0,
        referenceAudios: 0,
        // Veo 3 makes sound; Veo 2 makes none.
        audio: !model.startsWith('veo-2.0'),
      });
    }
    assert.deepEqual(capabilitiesOf(options('veo-3.0-generate-001', true)), ANY_INPUT);

    const params = (images: number, videos = 0, audios = 0): GenerationParams => ({
      prompt: 'p',
      image_urls: Array.from({ length: images }, (_, i) => `https://example.test/i${i}`),
      video_urls: Array.from({ length: videos }, (_, i) => `https://example.test/v${i}`),
      audio_urls: Array.from({ length: audios }, (_, i) => `https://example.test/a${i}`),
      duration: 5,
      quality: '720p',
      aspect_ratio: '16:9',
      seed: 1,
      callback_url: null,
      generate_audio: false,
    });
    const refused = (model: string, id: BuiltInModelId, p: GenerationParams) =>
      unsupportedInput(getModel(id), p, capabilitiesOf(options(model)), 'veo');
    assert.equal(
      refused('veo-3.0-generate-001', 'videogen-2.0-image-to-video', params(2))?.param,
      'image_urls',
    );
    assert.equal(refused(V31, 'videogen-2.0-image-to-video', params(2)), undefined);
    assert.match(
      refused(V31, 'videogen-2.0-reference-to-video', params(4))?.message ?? '',
      /at most 3 reference images/,
    );
    assert.equal(refused(V31, 'videogen-2.0-reference-to-video', params(1, 1))?.param, 'video_urls');
    assert.equal(refused(V31, 'videogen-2.0-fast-reference-to-video', params(0, 0, 1))?.param, 'audio_urls');
    assert.equal(
      refused('veo-2.0-generate-001', 'videogen-2.0-reference-to-video', params(1))?.param,
      'image_urls',
    );
    const sound = { ...params(0), generate_audio: true };
    assert.equal(
      refused('veo-2.0-generate-001', 'videogen-2.0-text-to-video', sound)?.param,
      'generate_audio',
    );
    assert.equal(refused(V31, 'videogen-2.0-text-to-video', sound), undefined);
  });

  it('refuses a model that is not a Veo id', () => {
    const file = {
      engines: { veo: { type: 'gemini', api_key: KEY, model: 'models/veo-3.1-generate-preview' } },
      models: { 'videogen-2.0-text-to-video': 'veo' },
    };
    assert.throws(() => parseEnginesConfig(file, 'engines.yaml', {}), /engines\.yaml: \/engines\/veo\/model/);
  });
});

describe('gemini engine against the fake Gemini API', () => {
  it('text mode: sends the prompt and mapped shape only, follows the download redirect, conforms and drops the sound', async () => {
    const server = await startFake();
    const render = job({ quality: '480p', ratio: '16:9', duration: 5, seed: 77 });
    const context = renderContext();
    await engineFor(server).render(render, context);
    const [submit] = server.submits;
    assert.deepEqual(submit?.body, {
      instances: [{ prompt: 'a paper boat drifts down a rainy street' }],
      parameters: { aspectRatio: '16:9', resolution: '720p', durationSeconds: 6 },
    });
    assert.match(submit?.contentType ?? '', /^application\/json/);
    assert.deepEqual(submit?.effective, {
      generation: '3.1',
      width: 1280,
      height: 720,
      seconds: 6,
      audio: true,
    });
    await assertContractVideo(render);
    assertProgressRisesToOne(context.progress);
    assert.equal(server.requestsTo('GET', '/v1beta/models/').length, server.pollsToFinish);
    assert.deepEqual(
      server.requests
        .filter((r) => r.url.includes('/files/') || r.url.startsWith('/blobs/'))
        .map((r) => r.status),
      [302, 200],
    );
    assertKeyKeptToHeaders(server);
    assertNoCancel(server);
  });

  it("text mode with generate_audio: sends no sound flag (the Gemini API takes none), keeps Veo 3's track", async () => {
    const server = await startFake();
    const render = job({ quality: '720p', ratio: '16:9', duration: 4, generateAudio: true });
    await engineFor(server).render(render, renderContext());
    assert.deepEqual(server.submits[0]?.body, {
      instances: [{ prompt: 'a paper boat drifts down a rainy street' }],
      parameters: { aspectRatio: '16:9', resolution: '720p', durationSeconds: 4 },
    });
    const facts = await assertContractVideo(render);
    assert.ok(facts.audio, "Veo's soundtrack survives conforming");
    const seconds = await audioSeconds(render.outputPath);
    assert.ok(Math.abs(seconds - 4) < 0.05, `audio lasts ${seconds} s`);
  });

  it('image mode: the first image as `image`, the second as `lastFrame`, inline with their types', async () => {
    const server = await startFake();
    const render = job({
      model: 'videogen-2.0-fast-image-to-video',
      quality: '720p',
      ratio: '9:16',
      duration: 4,
      images: [assets.wide, assets.tall],
    });
    await engineFor(server, { model: 'veo-3.1-fast-generate-preview' }).render(render, renderContext());
    assert.deepEqual(server.submits[0]?.body, {
      instances: [
        {
          prompt: 'a paper boat drifts down a rainy street',
          image: { bytesBase64Encoded: await base64(assets.wide.path), mimeType: 'image/png' },
          lastFrame: { bytesBase64Encoded: await base64(assets.tall.path), mimeType: 'image/jpeg' },
        },
      ],
      parameters: { aspectRatio: '9:16', resolution: '720p', durationSeconds: 4 },
    });
    await assertContractVideo(render);
  });

  it('reference mode: up to three `asset` images, at 8 s and 1080p, other types re-encoded as PNG', async () => {
    const server = await startFake();
    const render = job({
      model: 'videogen-2.0-reference-to-video',
      quality: '1080p',
      ratio: '16:9',
      // Reference images make Veo take 8 s, and so 1080p: the 8 s it makes are cut to the job's 4.
      duration: 4,
      images: [assets.wide.path, assets.tall.path, webp],
    });
    await engineFor(server).render(render, renderContext());
    const submit = server.submits[0];
    const instance = firstInstance(submit);
    assert.deepEqual(Object.keys(instance), ['prompt', 'referenceImages']);
    assert.deepEqual(
      (instance.referenceImages as { referenceType: string; image: { mimeType: string } }[]).map((r) => [
        r.referenceType,
        r.image.mimeType,
      ]),
      [
        ['asset', 'image/png'],
        ['asset', 'image/jpeg'],
        ['asset', 'image/png'],
      ],
    );
    assert.deepEqual(
      submit?.images.map((image) => [image.role, image.width, image.height]),
      [
        ['reference', 1000, 560],
        ['reference', 600, 800],
        ['reference', 400, 400],
      ],
    );
    assert.deepEqual(submit?.body.parameters, {
      aspectRatio: '16:9',
      resolution: '1080p',
      durationSeconds: 8,
    });
    await assertContractVideo(render);
  });

  it('Veo 2: no resolution, 5 s for a 4 s job, a silent video conformed', async () => {
    const server = await startFake();
    const render = job({
      model: 'videogen-2.0-fast-image-to-video',
      ratio: 'adaptive',
      images: [assets.tall],
    });
    await engineFor(server, { model: 'veo-2.0-generate-001' }).render(render, renderContext());
    assert.deepEqual(server.submits[0]?.body.parameters, { aspectRatio: '9:16', durationSeconds: 5 });
    assert.equal(server.submits[0]?.effective.audio, false);
    await assertContractVideo(render);
  });

  it('with unsupported_inputs: drop, leaves out what the model cannot take; without, fails before spending', async () => {
    const server = await startFake();
    const veo3 = { model: 'veo-3.0-generate-001' };
    const twoImages = job({ model: 'videogen-2.0-image-to-video', images: [assets.wide, assets.tall] });
    await engineFor(server, { ...veo3, unsupported_inputs: 'drop' }).render(twoImages, renderContext());
    const instance = firstInstance(server.submits[0]);
    assert.deepEqual(Object.keys(instance), ['prompt', 'image']);

    const everything = job({
      model: 'videogen-2.0-reference-to-video',
      ratio: '1:1',
      images: [assets.wide],
      audios: [assets.audio],
    });
    await engineFor(server, { ...veo3, unsupported_inputs: 'drop' }).render(everything, renderContext());
    assert.deepEqual(server.submits[1]?.body.instances, [
      { prompt: 'a paper boat drifts down a rainy street' },
    ]);
    await assertContractVideo(everything);

    const refused = await taskFailure(engineFor(server, veo3).render(twoImages, renderContext()));
    assert.equal(refused.code, 'invalid_asset');
    assert.match(refused.message, /image_urls\[1\].*a last frame.*veo-3\.0-generate-001/);
    assert.equal(server.submits.length, 2);
  });

  it('waits out a 429 for its RetryInfo delay (no Retry-After is sent), then renders', async () => {
    const server = await startFake();
    server.failures.push({ route: 'submit', status: 429, retryDelay: '0.8s' });
    const render = job();
    await engineFor(server).render(render, renderContext());
    const submits = server.requestsTo('POST', '/v1beta/models/');
    assert.deepEqual(
      submits.map((r) => r.status),
      [429, 200],
    );
    const waited = (submits[1]?.at ?? 0) - (submits[0]?.at ?? 0);
    assert.ok(waited >= 790, `waited ${waited} ms for a retryDelay of 0.8s`);
    await assertContractVideo(render);
  });

  it('fails at once with upstream_unavailable on a per-day or zero quota', async () => {
    const server = await startFake();
    server.failures.push({
      route: 'submit',
      status: 429,
      retryDelay: '36000s',
      quotaId: 'PredictLongRunningRequestsPerDayPerProjectPerModel-FreeTier',
      quotaValue: '0',
    });
    const failure = await taskFailure(engineFor(server).render(job(), renderContext()));
    assert.equal(failure.code, 'upstream_unavailable');
    assert.match(failure.message, /quota is exhausted.*RESOURCE_EXHAUSTED.*not retried/);
    assert.equal(server.requestsTo('POST', '/v1beta/models/').length, 1);
  });

  it('retries a 503 on a poll and a 500 on the download', async () => {
    const server = await startFake();
    server.failures.push({ route: 'poll', status: 503 }, { route: 'download', status: 500 });
    const render = job();
    await engineFor(server).render(render, renderContext());
    assert.ok(server.requests.some((r) => r.url.includes('/operations/') && r.status === 503));
    assert.deepEqual(
      server.requests.filter((r) => r.url.includes('/files/')).map((r) => r.status),
      [500, 302],
    );
    await assertContractVideo(render);
  });

  it("fails with upstream_refused and Veo's reasons when its safety filters remove the video", async () => {
    const server = await startFake();
    server.outcomes.push({ kind: 'filtered' });
    const failure = await taskFailure(engineFor(server).render(job(), renderContext()));
    assert.equal(failure.code, 'upstream_refused');
    assert.ok(failure.message.includes(RAI_REASON), failure.message);
    assert.equal(server.submits.length, 1);
  });

  it('fails with upstream_refused when Veo refuses the input at submit, and for a safety error', async () => {
    const server = await startFake();
    const broken = job({ model: 'videogen-2.0-image-to-video', images: [brokenPng] });
    const refused = await taskFailure(engineFor(server).render(broken, renderContext()));
    assert.equal(refused.code, 'upstream_refused');
    assert.match(
      refused.message,
      /^gemini engine "veo": Veo refused the request: Your use case is currently not supported/,
    );
    assert.equal(server.requestsTo('POST', '/v1beta/models/').length, 1, 'not retried');

    server.outcomes.push({
      kind: 'error',
      code: 3,
      message: "The prompt could not be submitted. It violates Google's Responsible AI practices.",
    });
    const unsafe = await taskFailure(engineFor(server).render(job(), renderContext()));
    assert.equal(unsafe.code, 'upstream_refused');
    assert.match(unsafe.message, /INVALID_ARGUMENT.*Responsible AI/);
  });

  it('fails with upstream_error for a failed operation and for a retired model', async () => {
    const server = await startFake();
    server.outcomes.push({
      kind: 'error',
      code: 13,
      message: 'Video generation failed due to an internal error.',
    });
    const failed = await taskFailure(engineFor(server).render(job(), renderContext()));
    assert.equal(failed.code, 'upstream_error');
    assert.match(failed.message, /Veo failed the video \(INTERNAL\): Video generation failed/);

    server.retiredModels.add('veo-3.0-generate-001');
    const retired = await taskFailure(
      engineFor(server, { model: 'veo-3.0-generate-001' }).render(job(), renderContext()),
    );
    assert.equal(retired.code, 'upstream_error');
    assert.match(
      retired.message,
      /the model "veo-3\.0-generate-001" is not available on the Gemini API.*404 NOT_FOUND/,
    );
  });

  it('on abort, stops polling and sends nothing upstream: the API cannot cancel a Veo operation', async () => {
    const server = await startFake();
    server.outcomes.push({ kind: 'never-finish' });
    const controller = new AbortController();
    const rendering = engineFor(server).render(job(), renderContext(controller.signal));
    await until(() => server.requestsTo('GET', '/v1beta/models/').length >= 2, 'two operation polls');
    const reason = new Error('cancelled by the client');
    controller.abort(reason);
    await assert.rejects(rendering, (error) => error === reason);
    assertNoCancel(server);
  });

  it('fails with timeout when the time limit runs out while Veo is still working, cancelling nothing', async () => {
    const server = await startFake();
    server.outcomes.push({ kind: 'never-finish' });
    const failure = await taskFailure(
      engineFor(server).render(job(), renderContext(undefined, { deadlineMs: 300 })),
    );
    assert.equal(failure.code, 'timeout');
    assert.match(failure.message, /still running upstream/);
    assertNoCancel(server);
  });

  it('gives the key to the API only: not to Google storage, and follows no redirect to another host', async () => {
    const lookup = (
      _host: string,
      options: { all?: boolean },
      callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void,
    ): void => {
      if (options.all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
      else callback(null, '127.0.0.1', 4);
    };
    const dispatcher = new Agent({ connect: { lookup } });
    try {
      const google = await startFake({ storageHost: 'video-storage.googleusercontent.com' });
      const render = job();
      await engineFor(google, {}, { dispatcher }).render(render, renderContext());
      const blob = google.requests.find((r) => r.url.startsWith('/blobs/'));
      assert.equal(blob?.host, `video-storage.googleusercontent.com:${google.port}`);
      assert.equal(blob?.status, 200);
      assert.equal(blob?.apiKey, undefined);
      await assertContractVideo(render);

      const elsewhere = await startFake({ storageHost: 'downloads.example.net' });
      const failure = await taskFailure(
        engineFor(elsewhere, {}, { dispatcher }).render(job(), renderContext()),
      );
      assert.equal(failure.code, 'upstream_error');
      assert.match(failure.message, /redirect to http:\/\/downloads\.example\.net:\d+ that is not followed/);
      assert.deepEqual(elsewhere.requestsTo('GET', '/blobs/'), []);
    } finally {
      await dispatcher.close();
    }
  });

  it("accepts the docs' engines-file example, which renders against the API", async () => {
    const server = await startFake();
    const config = parseEnginesConfig(await docsExample('gemini-veo'), 'engines.yaml', {
      GEMINI_API_KEY: KEY,
    });
    assert.deepEqual(
      [...config.models.values()].map((route) => route[0]?.[0]?.engine),
      ['veo', 'veo', 'veo', 'veo-fast', 'veo-fast', 'veo-fast'],
    );
    assert.equal(createEngines(config).get('veo-fast')?.name, 'veo-fast');
    const example = config.engines.get('veo-fast') as EngineOptions & GeminiOptions;
    assert.deepEqual(example, { type: 'gemini', api_key: KEY, model: 'veo-3.1-fast-generate-preview' });
    const render = job({ model: 'videogen-2.0-fast-text-to-video' });
    await new GeminiEngine(
      'veo-fast',
      { ...example, base_url: server.url, poll_interval_ms: 5 },
      { baseDir: dir },
    ).render(render, renderContext());
    assert.equal(server.submits[0]?.model, 'veo-3.1-fast-generate-preview');
    await assertContractVideo(render);
  });

  it('check() reads the model with the key; a bad key and a retired model say so without the key', async () => {
    await engineFor(fake).check(new AbortController().signal);
    assert.equal(fake.requestsTo('GET', `/v1beta/models/${V31}`).at(-1)?.status, 200);

    const wrongKey = `${KEY}-revoked`;
    const bad = new GeminiEngine(
      'veo',
      { type: 'gemini', base_url: fake.url, api_key: wrongKey, model: V31 },
      { baseDir: dir },
    );
    const refused = await bad.check(new AbortController().signal).then(
      () => assert.fail('a bad key passed'),
      (error: unknown) => error as Error,
    );
    assert.match(
      refused.message,
      /refused the API key \(HTTP 400 INVALID_ARGUMENT API_KEY_INVALID: API key not valid/,
    );
    assert.ok(!refused.message.includes(wrongKey) && !refused.message.includes(KEY.slice(0, 12)));

    fake.retiredModels.add('veo-3.0-fast-generate-001');
    await assert.rejects(
      engineFor(fake, { model: 'veo-3.0-fast-generate-001' }).check(new AbortController().signal),
      /the model "veo-3\.0-fast-generate-001" is not available on the Gemini API/,
    );
    assertKeyKeptToHeaders(fake, [KEY, wrongKey]);
  });
});

describe('the fake Gemini API refuses what the Gemini API refuses', () => {
  const submit = async (
    body: unknown,
    model = V31,
    headers: Record<string, string> = { 'x-goog-api-key': KEY },
  ) => {
    const response = await fetch(`${fake.url}/v1beta/models/${model}:predictLongRunning`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return {
      status: response.status,
      body: (await response.json()) as { error?: { message: string; status: string } },
    };
  };
  const text = (parameters: Record<string, unknown> = {}, instance: Record<string, unknown> = {}) => ({
    instances: [{ prompt: 'a kite', ...instance }],
    parameters,
  });
  const refusedWith = async (body: unknown, message: string | RegExp, model = V31) => {
    const answer = await submit(body, model);
    assert.equal(answer.status, 400, JSON.stringify(answer.body));
    assert.equal(answer.body.error?.status, 'INVALID_ARGUMENT');
    if (typeof message === 'string') assert.equal(answer.body.error?.message, message);
    else assert.match(answer.body.error?.message ?? '', message);
  };
  const png = async () => ({ bytesBase64Encoded: await base64(assets.wide.path), mimeType: 'image/png' });

  it('a missing key (403), a wrong key (400 API_KEY_INVALID) and a retired model (404)', async () => {
    const none = await submit(text(), V31, {});
    assert.equal(none.status, 403);
    assert.equal(none.body.error?.status, 'PERMISSION_DENIED');
    const wrong = await submit(text(), V31, { 'x-goog-api-key': 'AIzaSy-wrong' });
    assert.equal(wrong.status, 400);
    assert.match(JSON.stringify(wrong.body), /API_KEY_INVALID/);
    fake.retiredModels.add('veo-3.0-fast-generate-001');
    const retired = await submit(text(), 'veo-3.0-fast-generate-001');
    assert.equal(retired.status, 404);
    assert.match(retired.body.error?.message ?? '', /is not found for API version v1beta/);
  });

  it('fields the Gemini API does not take: seed, generateAudio, numberOfVideos, unknown names', async () => {
    await refusedWith(text({ seed: 7 }), /^`seed` isn't supported by this model/);
    await refusedWith(text({ generateAudio: true }), /^`generateAudio` isn't supported/);
    await refusedWith(text({ numberOfVideos: 1 }), /^`numberOfVideos` isn't supported/);
    await refusedWith(
      text({}, { image: { imageBytes: 'AAAA', mimeType: 'image/png' } }),
      /^`imageBytes` isn't/,
    );
    await refusedWith(
      { ...text(), config: {} },
      'Invalid JSON payload received. Unknown name "config": Cannot find field.',
    );
    await refusedWith(text({ resolution: '720p' }), /^`resolution` isn't supported/, 'veo-2.0-generate-001');
    await refusedWith(
      text({}, { lastFrame: await png(), image: await png() }),
      /^`lastFrame` isn't/,
      'veo-3.0-generate-001',
    );
  });

  it('values out of range: durations, 1080p under 8 s, aspect ratios, sample counts, reference rules', async () => {
    await refusedWith(
      text({ durationSeconds: '6' }),
      'The value type for `durationSeconds` needs to be a number',
    );
    await refusedWith(
      text({ durationSeconds: 5 }),
      'The number value for `durationSeconds` is out of bound. Please provide a value between 4 and 8, inclusive.',
    );
    await refusedWith(
      text({ resolution: '1080p', durationSeconds: 6 }),
      '1080p is not supported for a duration of 6 seconds.',
    );
    await refusedWith(text({ aspectRatio: '1:1' }), /^Your use case is currently not supported/);
    await refusedWith(text({ sampleCount: 2 }), /^Your use case/);
    await refusedWith(text({}, { lastFrame: await png() }), /^Your use case/);
    const reference = { image: await png(), referenceType: 'asset' };
    await refusedWith(
      text({}, { referenceImages: [reference, reference, reference, reference] }),
      /^Your use case/,
    );
    await refusedWith(text({ durationSeconds: 6 }, { referenceImages: [reference] }), /^Your use case/);
    await refusedWith(
      text({}, { referenceImages: [{ ...reference, referenceType: 'style' }] }),
      /^Your use case/,
    );
    assert.equal((await submit(text({ personGeneration: 'allow_all', sampleCount: 1 }))).status, 200);
    fake.refusedPersonGeneration.add('allow_all');
    await refusedWith(
      text({ personGeneration: 'allow_all' }),
      'allow_all for personGeneration is currently not supported.',
    );
  });

  it('no cancel or delete route; polls omit `done` while running; downloads need the key and expire after 2 days', async () => {
    const server = await startFake();
    const started = await fetch(`${server.url}/v1beta/models/${V31}:predictLongRunning`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': KEY },
      body: JSON.stringify(text({ durationSeconds: 4 })),
    });
    const { name } = (await started.json()) as { name: string };
    assert.match(name, /^models\/veo-3\.1-generate-preview\/operations\/[a-z0-9]{12}$/);
    const call = (path: string, init: RequestInit = {}) =>
      fetch(`${server.url}${path}`, { ...init, headers: { 'x-goog-api-key': KEY, ...init.headers } });
    assert.equal((await call(`/v1beta/${name}:cancel`, { method: 'POST' })).status, 404);
    assert.equal((await call(`/v1beta/${name}`, { method: 'DELETE' })).status, 404);
    assert.deepEqual(await (await call(`/v1beta/${name}`)).json(), { name });
    const done = (await (await call(`/v1beta/${name}`)).json()) as {
      done: boolean;
      response: { generateVideoResponse: { generatedSamples: { video: { uri: string } }[] } };
    };
    assert.equal(done.done, true);
    const uri = new URL(done.response.generateVideoResponse.generatedSamples[0]?.video.uri ?? '');
    const path = `${uri.pathname}${uri.search}`;
    assert.equal((await fetch(`${server.url}${path}`, { redirect: 'manual' })).status, 403);
    assert.equal((await call(path, { redirect: 'manual' })).status, 302);
    server.clockOffsetMs = 2 * 24 * 3600 * 1000 + 1000;
    assert.equal((await call(path, { redirect: 'manual' })).status, 404);
  });
});

/**
 * The `ark` engine (Seedance on BytePlus ModelArk / Volcengine Ark) against the strict fake of
 * test/fakes/ark-server.ts over real HTTP: each mode rendered and conformed, the exact create requests,
 * retries, refusals and failures, cancel (which Ark honours only for a queued task), `check()`, the
 * creation-time capabilities, the engines file the docs recommend, and the fake's own refusals.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadImage } from '@napi-rs/canvas';
import { ANY_INPUT, unsupportedInput } from '../src/domain/engine-capabilities.js';
import { TaskFailure } from '../src/domain/errors.js';
import { getModel, MODEL_IDS } from '../src/domain/models.js';
import { ArkEngine } from '../src/engines/ark/ark-engine.js';
import type { ArkOptions } from '../src/engines/ark/ark-options.js';
import { createEngines, routeEngines } from '../src/engines/create-engines.js';
import { capabilitiesOf } from '../src/engines/engine-types.js';
import { parseEnginesConfig } from '../src/engines/engines-file.js';
import type { RenderJob } from '../src/ports/engine.js';
import { FakeArkServer } from './fakes/ark-server.js';
import { type AssetServer, startAssetServer } from './helpers/asset-server.js';
import { docsExample } from './helpers/docs-examples.js';
import { type GridAssets, writeGridAssets } from './helpers/engine-grid.js';
import { writeTestAudio, writeTestImage, writeTestVideo } from './helpers/media-fixtures.js';
import { audioSeconds, mp4Facts } from './helpers/mp4-facts.js';
import {
  assertContractVideo,
  assertProgressRisesToOne,
  jobMaker,
  renderContext,
} from './helpers/render-jobs.js';

const KEY = 'ark-test-7Yq2Lm9Xc4Vb8Nz1Rt6Pw3Hs';
const SEEDANCE_2 = 'dreamina-seedance-2-0-260128';
const SEEDANCE_2_FAST = 'dreamina-seedance-2-0-fast-260128';
const TASKS = '/api/v3/contents/generations/tasks';

let dir: string;
let assets: GridAssets;
/** A 200x150 PNG: under Ark's 300 px minimum side. */
let smallImage: string;
let m4aAudio: string;
let assetServer: AssetServer;
/** A 800x600, 3 s clip on the asset server, as a client's web URL. */
let clipUrl: string;
const fakes: FakeArkServer[] = [];

async function fake(options: { notActivated?: string[] } = {}): Promise<FakeArkServer> {
  const server = await FakeArkServer.start({ apiKey: KEY, cacheDir: join(dir, 'cache'), ...options });
  fakes.push(server);
  return server;
}

function engineFor(server: FakeArkServer, options: Partial<ArkOptions> = {}): ArkEngine {
  return new ArkEngine(
    'seedance',
    {
      type: 'ark',
      base_url: server.baseUrl,
      api_key: KEY,
      model: SEEDANCE_2,
      poll_interval_ms: 5,
      ...options,
    },
    { baseDir: dir },
  );
}

const arkJob = jobMaker(() => dir, {
  taskPrefix: 'task-ark',
  prompt: 'a red kite rising over green hills at sunset',
  duration: 4,
  seed: 1234,
});

async function taskFailure(promise: Promise<unknown>): Promise<TaskFailure> {
  const error = await promise.then(
    () => assert.fail('expected the render to fail'),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof TaskFailure, `a TaskFailure, got ${String(error)}`);
  return error;
}

/** The content items of the only create request `server` took, with inline data shortened to its type. */
function sentContent(server: FakeArkServer): unknown[] {
  const content = server.creates.at(-1)?.body.content as { [key: string]: { url?: string } | string }[];
  return content.map((item) => {
    const copy: Record<string, unknown> = { ...item };
    for (const field of ['image_url', 'video_url', 'audio_url']) {
      const url = (item[field] as { url?: string } | undefined)?.url;
      if (url?.startsWith('data:')) copy[field] = { url: `${url.slice(0, url.indexOf(','))},…` };
    }
    return copy;
  });
}

function withoutContent(server: FakeArkServer): Record<string, unknown> {
  const { content: _content, ...rest } = server.creates.at(-1)?.body ?? {};
  return rest;
}

async function post(
  server: FakeArkServer,
  body: unknown,
  key = KEY,
): Promise<{ status: number; json: unknown }> {
  const answer = await fetch(`${server.baseUrl}/contents/generations/tasks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: answer.status, json: await answer.json() };
}

function errorCode(json: unknown): string | undefined {
  return (json as { error?: { code?: string } }).error?.code;
}

function errorMessage(json: unknown): string {
  return (json as { error?: { message?: string } }).error?.message ?? '';
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-ark-engine-'));
  assets = await writeGridAssets(dir);
  smallImage = join(dir, 'small-image');
  m4aAudio = join(dir, 'tone.m4a');
  const clip = join(dir, 'clip.mp4');
  await Promise.all([
    writeTestImage(smallImage, { width: 200, height: 150, colour: [20, 160, 90], format: 'png' }),
    writeTestAudio(m4aAudio, { seconds: 3 }),
    writeTestVideo(clip, { width: 800, height: 600, seconds: 3, fps: 24 }),
  ]);
  assetServer = await startAssetServer({ '/clip.mp4': { body: await readFile(clip), type: 'video/mp4' } });
  clipUrl = `${assetServer.url}/clip.mp4`;
});

after(async () => {
  await Promise.all(fakes.map((server) => server.close()));
  await assetServer.close();
  await rm(dir, { recursive: true, force: true });
});

describe('ark engine: each mode, sent as Ark takes it and conformed to the request', () => {
  it('text to video on Seedance 2.0, 480p 16:9: prompt only, no seed, no sound', async () => {
    const server = await fake();
    const job = arkJob({ quality: '480p', ratio: '16:9', duration: 5 });
    const context = renderContext();
    await engineFor(server).render(job, context);
    assert.deepEqual(server.creates[0]?.body, {
      model: SEEDANCE_2,
      content: [{ type: 'text', text: job.params.prompt }],
      resolution: '480p',
      ratio: '16:9',
      duration: 5,
      watermark: false,
      generate_audio: false,
    });
    assert.deepEqual(server.creates[0]?.ignoredFields, []);
    await assertContractVideo(job);
    assertProgressRisesToOne(context.progress);
    const polls = server.requests.filter((r) => r.method === 'GET' && r.path.startsWith(`${TASKS}/`));
    assert.ok(polls.length >= 4, 'polled through queued and running to succeeded');
    assert.ok(
      server.requests.every((r) => r.path.startsWith('/tos/') || r.authorization === `Bearer ${KEY}`),
      'the key goes with every API call',
    );
    const download = server.requests.find((r) => r.path.startsWith('/tos/'));
    assert.equal(download?.authorization, undefined, 'the signed video link is fetched without the key');
  });

  it("text to video with generate_audio: sent to Ark, and the model's own track kept through conforming", async () => {
    const server = await fake();
    const job = arkJob({ quality: '480p', ratio: '16:9', duration: 5, generateAudio: true });
    await engineFor(server).render(job, renderContext());
    assert.equal(server.creates[0]?.body.generate_audio, true);
    const facts = await assertContractVideo(job);
    // The fake's track is a mono AAC tone (as Seedance's is mono): conformed to 48 kHz stereo, still sounding.
    assert.ok(facts.audio, 'the model made sound and it was kept');
    const seconds = await audioSeconds(job.outputPath);
    assert.ok(Math.abs(seconds - job.params.duration) < 0.05, `audio lasts ${seconds} s`);
  });

  it('a first frame on 2.0 fast, adaptive at 1080p: 720p (the fast model has no 1080p), ratio adaptive', async () => {
    const server = await fake();
    const job = arkJob({
      model: 'videogen-2.0-fast-image-to-video',
      quality: '1080p',
      ratio: 'adaptive',
      images: [assets.tall],
    });
    await engineFor(server, { model: SEEDANCE_2_FAST }).render(job, renderContext());
    assert.deepEqual(sentContent(server), [
      { type: 'text', text: job.params.prompt },
      { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,…' }, role: 'first_frame' },
    ]);
    assert.deepEqual(withoutContent(server), {
      model: SEEDANCE_2_FAST,
      resolution: '720p',
      ratio: 'adaptive',
      duration: 4,
      watermark: false,
      generate_audio: false,
    });
    assert.deepEqual(job.frame, { width: 1080, height: 1440 });
    await assertContractVideo(job);
  });

  it('first and last frames on 2.0 at 480p 4:3, and a too-small image enlarged into Ark limits', async () => {
    const server = await fake();
    const job = arkJob({
      model: 'videogen-2.0-image-to-video',
      quality: '480p',
      ratio: '4:3',
      images: [{ path: smallImage, width: 200, height: 150 }, assets.wide],
    });
    await engineFor(server).render(job, renderContext());
    assert.deepEqual(sentContent(server), [
      { type: 'text', text: job.params.prompt },
      { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,…' }, role: 'first_frame' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,…' }, role: 'last_frame' },
    ]);
    assert.equal(withoutContent(server).ratio, '4:3');
    assert.equal(withoutContent(server).resolution, '480p');
    const content = (server.creates[0]?.body.content ?? []) as { image_url?: { url: string } }[];
    const first = content[1]?.image_url?.url ?? '';
    const sent = await loadImage(Buffer.from(first.slice(first.indexOf(',') + 1), 'base64'));
    assert.deepEqual([sent.width, sent.height], [400, 300], '200x150 scaled to a 300 px short side');
    await assertContractVideo(job);
  });

  it('reference images, a video (its web URL) and audio on 2.0 fast, 480p 9:16: sound asked for', async () => {
    const server = await fake();
    const job = arkJob({
      model: 'videogen-2.0-fast-reference-to-video',
      quality: '480p',
      ratio: '9:16',
      images: [assets.wide, assets.tall],
      videos: [{ path: join(dir, 'clip.mp4'), url: clipUrl, width: 800, height: 600 }],
      audios: [assets.audio, m4aAudio],
      generateAudio: true,
    });
    await engineFor(server, { model: SEEDANCE_2_FAST }).render(job, renderContext());
    assert.deepEqual(sentContent(server), [
      { type: 'text', text: job.params.prompt },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,…' }, role: 'reference_image' },
      { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,…' }, role: 'reference_image' },
      { type: 'video_url', video_url: { url: clipUrl }, role: 'reference_video' },
      { type: 'audio_url', audio_url: { url: 'data:audio/wav;base64,…' }, role: 'reference_audio' },
      { type: 'audio_url', audio_url: { url: 'data:audio/wav;base64,…' }, role: 'reference_audio' },
    ]);
    assert.deepEqual(withoutContent(server), {
      model: SEEDANCE_2_FAST,
      resolution: '480p',
      ratio: '9:16',
      duration: 4,
      watermark: false,
      generate_audio: true,
    });
    await assertContractVideo(job);
  });

  it('Seedance 1.0 pro: the seed (within 2^31), 13 s asked as its longest 12 s, adaptive text sent as 16:9', async () => {
    const server = await fake();
    const job = arkJob({ quality: '480p', ratio: 'adaptive', duration: 13, seed: 4_294_967_295 });
    await engineFor(server, { model: 'seedance-1-0-pro-250528', watermark: true }).render(
      job,
      renderContext(),
    );
    assert.deepEqual(withoutContent(server), {
      model: 'seedance-1-0-pro-250528',
      resolution: '480p',
      ratio: '16:9',
      duration: 12,
      seed: 2_147_483_647,
      watermark: true,
    });
    const facts = await assertContractVideo(job);
    assert.equal(facts.video?.frames, 13 * 24);
  });
});

describe('ark engine: retries, refusals and failures', () => {
  it('waits out a 429 with Retry-After, then creates the task once', async () => {
    const server = await fake();
    server.busyAnswers.push({
      status: 429,
      code: 'RateLimitExceeded.EndpointRPMExceeded',
      headers: { 'retry-after': '1' },
    });
    const job = arkJob();
    await engineFor(server).render(job, renderContext());
    const posts = server.requests.filter((r) => r.method === 'POST');
    assert.deepEqual(
      posts.map((r) => r.status),
      [429, 200],
    );
    const waited = (posts[1]?.at ?? 0) - (posts[0]?.at ?? 0);
    assert.ok(waited >= 900, `waited ${waited} ms for Retry-After: 1`);
    assert.equal(server.creates.length, 1);
    await assertContractVideo(job);
  });

  it('retries a 500 on create and on a poll', async () => {
    const server = await fake();
    server.busyAnswers.push({ status: 500, code: 'InternalServiceError' });
    server.busyPolls.push({ status: 500, code: 'InternalServiceError' });
    const job = arkJob();
    await engineFor(server).render(job, renderContext());
    assert.deepEqual(
      server.requests.filter((r) => r.method === 'POST').map((r) => r.status),
      [500, 200],
    );
    assert.equal(server.requests.filter((r) => r.method === 'GET' && r.status === 500).length, 1);
    await assertContractVideo(job);
  });

  it('a prompt refused by moderation is upstream_refused with Ark’s message, asked once', async () => {
    const server = await fake();
    server.flaggedWords.push('forbidden-scene');
    const failure = await taskFailure(
      engineFor(server).render(arkJob({ prompt: 'a forbidden-scene at noon' }), renderContext()),
    );
    assert.equal(failure.code, 'upstream_refused');
    assert.match(
      failure.message,
      /InputTextSensitiveContentDetected: The request failed because the input text may contain sensitive information/,
    );
    assert.equal(server.requests.filter((r) => r.method === 'POST').length, 1);
    assert.equal(server.creates.length, 0);
  });

  it('a video refused by output moderation is upstream_refused; the ended task is not deleted', async () => {
    const server = await fake();
    server.outcome = 'refuse-output';
    const failure = await taskFailure(engineFor(server).render(arkJob(), renderContext()));
    assert.equal(failure.code, 'upstream_refused');
    assert.match(
      failure.message,
      /OutputVideoSensitiveContentDetected: .*output video may contain sensitive/,
    );
    assert.deepEqual(server.deletes, []);
  });

  it('a failed or expired task is upstream_error with Ark’s code and message', async () => {
    const server = await fake();
    server.outcome = 'fail';
    const failed = await taskFailure(engineFor(server).render(arkJob(), renderContext()));
    assert.equal(failed.code, 'upstream_error');
    assert.match(failed.message, /^ark engine "seedance": InternalServiceError: The service encountered/);
    server.outcome = 'expire';
    const expired = await taskFailure(engineFor(server).render(arkJob(), renderContext()));
    assert.equal(expired.code, 'upstream_error');
    assert.match(expired.message, /expired/);
  });

  it('a model the account has not activated, and a refused key, are upstream_error without the key', async () => {
    const server = await fake({ notActivated: [SEEDANCE_2] });
    const closed = await taskFailure(engineFor(server).render(arkJob(), renderContext()));
    assert.equal(closed.code, 'upstream_error');
    assert.match(closed.message, /HTTP 404\): ModelNotOpen: Your account \d+ has not activated the model/);
    const wrongKey = `${KEY}-revoked`;
    const refused = await taskFailure(
      engineFor(server, { api_key: wrongKey, model: SEEDANCE_2_FAST }).render(arkJob(), renderContext()),
    );
    assert.equal(refused.code, 'upstream_error');
    assert.match(refused.message, /Ark refused the API key \(HTTP 401\): AuthenticationError/);
    assert.ok(!refused.message.includes(KEY.slice(0, 12)));
  });
});

describe('ark engine: cancel', () => {
  it('an abort while the task is queued deletes it, which cancels it on Ark', async () => {
    const server = await fake();
    server.pollsQueued = Number.POSITIVE_INFINITY;
    const controller = new AbortController();
    const rendering = engineFor(server).render(arkJob(), renderContext(controller.signal));
    await server.waitForRequest((r) => r.method === 'GET' && r.path.startsWith(`${TASKS}/`));
    controller.abort(new Error('cancelled by the client'));
    await assert.rejects(rendering, /cancelled by the client/);
    const id = server.creates[0]?.id ?? '';
    assert.deepEqual(server.deletes, [{ id, statusBefore: 'queued', answered: 200 }]);
    assert.equal(server.statusOf(id), 'cancelled');
  });

  it('an abort while it runs asks once (409: Ark cannot stop it) and stops waiting', async () => {
    const server = await fake();
    server.pollsQueued = 0;
    server.outcome = 'never-finish';
    const controller = new AbortController();
    const rendering = engineFor(server).render(arkJob(), renderContext(controller.signal));
    await server.waitForRequest((r) => r.method === 'GET' && r.path.startsWith(`${TASKS}/`));
    controller.abort(new Error('lease lost'));
    await assert.rejects(rendering, /lease lost/);
    const id = server.creates[0]?.id ?? '';
    assert.deepEqual(server.deletes, [{ id, statusBefore: 'running', answered: 409 }]);
    assert.equal(server.statusOf(id), 'running', 'the video goes on upstream (and is billed)');
  });

  it('the task time limit fails it with timeout and deletes the queued task', async () => {
    const server = await fake();
    server.pollsQueued = Number.POSITIVE_INFINITY;
    const failure = await taskFailure(
      engineFor(server).render(arkJob(), renderContext(undefined, { deadlineMs: 300 })),
    );
    assert.equal(failure.code, 'timeout');
    assert.match(failure.message, /still queued upstream/);
    const id = server.creates[0]?.id ?? '';
    assert.equal(server.statusOf(id), 'cancelled');
  });
});

describe('ark engine: inputs it cannot send', () => {
  it('a reference video that is not a web URL fails with invalid_asset before anything is sent; drop leaves it out', async () => {
    const server = await fake();
    const inline = (): RenderJob =>
      arkJob({
        model: 'videogen-2.0-reference-to-video',
        images: [assets.wide],
        videos: [{ path: join(dir, 'clip.mp4'), url: 'storage:uploads/clip', width: 800, height: 600 }],
      });
    const failure = await taskFailure(engineFor(server).render(inline(), renderContext()));
    assert.equal(failure.code, 'invalid_asset');
    assert.match(
      failure.message,
      /^video_urls\[0\]: ark engine "seedance" sends reference videos to Ark as the web/,
    );
    assert.equal(server.requests.length, 0);

    const job = inline();
    await engineFor(server, { unsupported_inputs: 'drop' }).render(job, renderContext());
    assert.deepEqual(
      sentContent(server).map((item) => (item as { type: string }).type),
      ['text', 'image_url'],
    );
    await assertContractVideo(job);
  });

  it('reference media longer than Ark takes fails with invalid_asset, naming the limit', async () => {
    const server = await fake();
    const job = arkJob({
      model: 'videogen-2.0-reference-to-video',
      images: [assets.wide],
      videos: [{ path: join(dir, 'clip.mp4'), url: clipUrl, width: 800, height: 600 }],
    });
    const long: RenderJob = { ...job, videos: job.videos.map((video) => ({ ...video, duration: 20 })) };
    const failure = await taskFailure(engineFor(server).render(long, renderContext()));
    assert.equal(failure.code, 'invalid_asset');
    assert.match(
      failure.message,
      /sends reference videos of 2 to 15 s to Seedance 2\.0; this one is 20\.0 s/,
    );
    assert.equal(server.requests.length, 0);
  });

  it('with drop, 1.0 pro fast gets the first frame only (it takes no last frame)', async () => {
    const server = await fake();
    const job = arkJob({ model: 'videogen-2.0-image-to-video', images: [assets.wide, assets.tall] });
    await engineFor(server, { model: 'seedance-1-0-pro-fast-251015', unsupported_inputs: 'drop' }).render(
      job,
      renderContext(),
    );
    assert.deepEqual(
      sentContent(server).map((item) => (item as { role?: string }).role),
      [undefined, 'first_frame'],
    );
    await assertContractVideo(job);
  });

  it('capabilities refuse at creation what the routed model cannot take', () => {
    const options = (model: string, extra: Partial<ArkOptions> = {}): ArkOptions => ({
      type: 'ark',
      api_key: 'k',
      model,
      ...extra,
    });
    const params = (counts: { images?: number; videos?: number; audios?: number }) => ({
      prompt: 'p',
      image_urls: Array.from({ length: counts.images ?? 0 }, (_, i) => `https://x.test/${i}.png`),
      video_urls: Array.from({ length: counts.videos ?? 0 }, (_, i) => `https://x.test/${i}.mp4`),
      audio_urls: Array.from({ length: counts.audios ?? 0 }, (_, i) => `https://x.test/${i}.wav`),
      duration: 5,
      quality: '720p' as const,
      aspect_ratio: '16:9' as const,
      seed: 1,
      callback_url: null,
      generate_audio: false,
    });
    const reference = getModel('videogen-2.0-reference-to-video');
    const image = getModel('videogen-2.0-image-to-video');

    assert.deepEqual(capabilitiesOf(options(SEEDANCE_2_FAST)), {
      firstFrame: true,
      lastFrame: true,
      referenceImages: 9,
      referenceVideos: 3,
      referenceAudios: 3,
      webSearch: true,
      assetIds: true,
      audio: true,
    });
    assert.equal(
      unsupportedInput(
        image,
        { ...params({ images: 1 }), generate_audio: true },
        capabilitiesOf(options('seedance-1-0-pro-250528')),
        'sd',
      )?.param,
      'generate_audio',
      'Seedance 1.0 makes no sound',
    );
    assert.equal(
      unsupportedInput(
        reference,
        params({ images: 9, videos: 3, audios: 3 }),
        capabilitiesOf(options(SEEDANCE_2)),
        'sd',
      ),
      undefined,
    );
    assert.match(
      unsupportedInput(
        image,
        params({ images: 2 }),
        capabilitiesOf(options('seedance-1-0-pro-fast-251015')),
        'sd',
      )?.message ?? '',
      /takes a first frame but no last frame/,
    );
    assert.equal(
      unsupportedInput(
        reference,
        params({ images: 1 }),
        capabilitiesOf(options('seedance-1-5-pro-251215')),
        'sd',
      )?.param,
      'image_urls',
    );
    assert.equal(
      unsupportedInput(
        reference,
        params({ images: 1, videos: 1 }),
        capabilitiesOf(options('ep-20260101-abcde', { model_family: 'seedance-1.0-pro' })),
        'sd',
      )?.param,
      'image_urls',
    );
    assert.deepEqual(capabilitiesOf(options('seedance-1-5-pro-251215', { unsupported_inputs: 'drop' })), {
      ...ANY_INPUT,
      webSearch: false,
      assetIds: true,
    });
    // Web search: the 2.x models in text mode; asset ids: every ark engine, no other.
    const text = getModel('videogen-2.0-text-to-video');
    const searching = { ...params({}), web_search: true };
    assert.equal(unsupportedInput(text, searching, capabilitiesOf(options(SEEDANCE_2)), 'sd'), undefined);
    assert.equal(
      unsupportedInput(text, searching, capabilitiesOf(options('seedance-1-5-pro-251215')), 'sd')?.param,
      'web_search',
    );
    const withAsset = { ...params({}), image_urls: ['asset://asset-1'] };
    assert.equal(unsupportedInput(image, withAsset, capabilitiesOf(options(SEEDANCE_2)), 'sd'), undefined);
    assert.equal(unsupportedInput(image, withAsset, ANY_INPUT, 'local')?.param, 'image_urls');
  });

  it('an engine whose model it cannot identify does not start; model_family names it', () => {
    const server = { baseUrl: 'https://ark.example.test/api/v3' } as FakeArkServer;
    assert.throws(() => engineFor(server, { model: 'ep-20260101123456-abcde' }), /set model_family/);
    assert.doesNotThrow(() =>
      engineFor(server, { model: 'ep-20260101123456-abcde', model_family: 'seedance-2.0-fast' }),
    );
  });
});

describe('ark engine: check()', () => {
  it('lists one task with the key: passes with a good key', async () => {
    const server = await fake();
    await engineFor(server).check(new AbortController().signal);
    const [call] = server.requests;
    assert.equal(call?.method, 'GET');
    assert.equal(`${call?.path}${call?.search}`, `${TASKS}?page_size=1`);
    assert.equal(server.creates.length, 0);
  });

  it('says the key was refused, without the key', async () => {
    const server = await fake();
    const wrongKey = 'ark-wrong-Qp9Zx7Lk3Mn5Bv1C';
    const error = await engineFor(server, { api_key: wrongKey })
      .check(new AbortController().signal)
      .then(
        () => assert.fail('expected check() to fail'),
        (caught: unknown) => caught,
      );
    assert.ok(error instanceof Error);
    assert.match(
      error.message,
      /^ark engine "seedance": Ark refused the API key \(HTTP 401: AuthenticationError/,
    );
    assert.ok(!error.message.includes(wrongKey.slice(0, 8)));
  });
});

describe('the recommended engines file (docs): six model IDs on Seedance 2.0 and 2.0 fast', () => {
  it('routes each model ID, the fast ones to the fast model; a standard and a fast one render', async () => {
    const server = await fake();
    const example = await docsExample('ark-seedance');
    for (const engine of Object.values(example.engines)) {
      Object.assign(engine, { base_url: server.baseUrl, poll_interval_ms: 10 });
    }
    const config = parseEnginesConfig(example, join(dir, 'engines.yaml'), { ARK_API_KEY: KEY });
    const router = routeEngines(config, createEngines(config));
    for (const model of MODEL_IDS) {
      assert.equal(
        router.engineFor(model)?.name,
        model.includes('-fast-') ? 'seedance-2-fast' : 'seedance-2',
      );
    }
    const models = ['videogen-2.0-text-to-video', 'videogen-2.0-fast-reference-to-video'] as const;
    for (const model of models) {
      const job = arkJob({ model, images: model.includes('text') ? [] : [assets.wide] });
      await router.engineFor(model)?.render(job, renderContext());
      assert.equal(
        server.creates.at(-1)?.body.model,
        model.includes('-fast-') ? SEEDANCE_2_FAST : SEEDANCE_2,
      );
      await assertContractVideo(job);
    }
  });
});

describe('the fake refuses what Ark refuses', () => {
  const text = { type: 'text', text: 'a lighthouse' };
  let image: string;

  before(async () => {
    const path = join(dir, 'fake-check-image.png');
    await writeTestImage(path, { width: 400, height: 300, colour: [10, 10, 200] });
    image = `data:image/png;base64,${(await readFile(path)).toString('base64')}`;
  });

  it('a missing or wrong key on every route: 401 AuthenticationError', async () => {
    const server = await fake();
    for (const [method, path] of [
      ['POST', TASKS],
      ['GET', `${TASKS}?page_size=1`],
      ['GET', `${TASKS}/cgt-20260101000000-abcde`],
      ['DELETE', `${TASKS}/cgt-20260101000000-abcde`],
    ] as const) {
      for (const headers of [
        {},
        { authorization: `Basic ${KEY}` },
        { authorization: 'Bearer nope' },
      ] as Record<string, string>[]) {
        const answer = await fetch(`${server.url}${path}`, { method, headers });
        const json = await answer.json();
        assert.equal(answer.status, 401);
        assert.deepEqual(
          { ...(json as { error: object }).error, message: undefined },
          { code: 'AuthenticationError', message: undefined, param: '', type: 'Unauthorized' },
        );
      }
    }
  });

  it('bodies, models and content items Ark refuses', async () => {
    const server = await fake({ notActivated: ['dreamina-seedance-2-5-260628'] });
    const cases: [unknown, number, string, RegExp?][] = [
      ['{"model":', 400, 'InvalidParameter', /could not parse the JSON body/],
      [{ content: [text] }, 400, 'MissingParameter'],
      [{ model: SEEDANCE_2 }, 400, 'MissingParameter'],
      [{ model: 'seedance-9', content: [text] }, 404, 'InvalidEndpointOrModel.NotFound'],
      [{ model: 'dreamina-seedance-2-5-260628', content: [text] }, 404, 'ModelNotOpen'],
      [
        { model: SEEDANCE_2, content: [text], generate_audio: 'true' },
        400,
        'InvalidParameter',
        /generate_audio/,
      ],
      [{ model: SEEDANCE_2, content: [text], generate_audio: 1 }, 400, 'InvalidParameter', /generate_audio/],
      [{ model: SEEDANCE_2, content: [{ type: 'image', url: image }] }, 400, 'InvalidParameter', /type/],
      [
        { model: SEEDANCE_2, content: [text, { type: 'image_url', image_url: image }] },
        400,
        'InvalidParameter',
      ],
      [
        {
          model: SEEDANCE_2,
          content: [
            text,
            { type: 'image_url', image_url: { url: image } },
            { type: 'image_url', image_url: { url: image } },
          ],
        },
        400,
        'InvalidParameter',
        /role must be specified for image contents/,
      ],
      [
        {
          model: SEEDANCE_2,
          content: [
            text,
            { type: 'image_url', image_url: { url: image }, role: 'first_frame' },
            { type: 'image_url', image_url: { url: image }, role: 'reference_image' },
          ],
        },
        400,
        'InvalidParameter',
        /cannot be mixed with reference media/,
      ],
      [
        {
          model: 'seedance-1-0-pro-fast-251015',
          content: [
            text,
            { type: 'image_url', image_url: { url: image }, role: 'first_frame' },
            { type: 'image_url', image_url: { url: image }, role: 'last_frame' },
          ],
        },
        400,
        'InvalidParameter',
        /last frame is not supported/,
      ],
      [
        {
          model: SEEDANCE_2,
          content: [
            text,
            { type: 'video_url', video_url: { url: 'data:video/mp4;base64,AAAA' }, role: 'reference_video' },
          ],
        },
        400,
        'InvalidParameter',
        /reference_video must be provided as a web url/,
      ],
      [
        {
          model: SEEDANCE_2,
          content: [
            text,
            { type: 'audio_url', audio_url: { url: 'https://x.test/a.mp3' }, role: 'reference_audio' },
          ],
        },
        400,
        'InvalidParameter',
        /requires at least one reference image or video/,
      ],
      [
        {
          model: SEEDANCE_2,
          content: [
            text,
            { type: 'image_url', image_url: { url: image }, role: 'reference_image' },
            {
              type: 'audio_url',
              audio_url: { url: 'data:audio/mp3;base64,T2dnUw==' },
              role: 'reference_audio',
            },
          ],
        },
        400,
        'InvalidParameter',
        /wav or mp3/,
      ],
      [{ model: SEEDANCE_2, content: [{ type: 'text', text: '' }] }, 400, 'MissingParameter'],
    ];
    for (const [body, status, code, message] of cases) {
      const answer = await post(server, body);
      assert.equal(answer.status, status, JSON.stringify(body).slice(0, 200));
      assert.equal(errorCode(answer.json), code, JSON.stringify(answer.json));
      if (message) assert.match(errorMessage(answer.json), message);
    }
    assert.equal(server.creates.length, 0);
  });

  it('values the model does not take, and ignores fields it does not know', async () => {
    const server = await fake();
    const cases: [Record<string, unknown>, RegExp][] = [
      [
        { model: SEEDANCE_2_FAST, resolution: '1080p' },
        /resolution .* not valid for model dreamina-seedance-2-0-fast in t2v/,
      ],
      [{ model: SEEDANCE_2, duration: 16 }, /duration .* must be less than or equal to 15/],
      [{ model: SEEDANCE_2, duration: 3 }, /duration .* must be greater than or equal to 4/],
      [{ model: SEEDANCE_2, ratio: '2:3' }, /ratio/],
      [{ model: 'seedance-1-0-pro-250528', ratio: 'adaptive' }, /ratio .* in t2v/],
      [{ model: SEEDANCE_2, service_tier: 'flex' }, /service_tier/],
      [{ model: SEEDANCE_2, seed: 4_294_967_296 }, /seed/],
      [{ model: SEEDANCE_2, watermark: 'no' }, /watermark/],
      [{ model: SEEDANCE_2, frames: 121 }, /frames/],
    ];
    for (const [fields, message] of cases) {
      const answer = await post(server, { content: [text], ...fields });
      assert.equal(answer.status, 400, JSON.stringify(fields));
      assert.equal(errorCode(answer.json), 'InvalidParameter');
      assert.match(errorMessage(answer.json), message);
    }
    const accepted = await post(server, {
      model: SEEDANCE_2,
      content: [text],
      fps: 30,
      seed: 9,
      camera_fixed: true,
    });
    assert.equal(accepted.status, 200);
    assert.match((accepted.json as { id: string }).id, /^cgt-\d{14}-[a-z0-9]{5}$/);
    assert.deepEqual(server.creates[0]?.ignoredFields, ['fps']);
  });

  it('DELETE: a queued task is cancelled, a running one is 409, an unknown id 404', async () => {
    const server = await fake();
    const headers = { authorization: `Bearer ${KEY}` };
    const created = await post(server, { model: SEEDANCE_2, content: [text] });
    const id = (created.json as { id: string }).id;
    const task = `${server.baseUrl}/contents/generations/tasks/${id}`;
    const queued = (await (await fetch(task, { headers })).json()) as Record<string, unknown>;
    assert.deepEqual(Object.keys(queued).sort(), ['created_at', 'id', 'model', 'status', 'updated_at']);
    assert.equal(queued.status, 'queued');
    const running = await fetch(task, { headers });
    assert.equal(((await running.json()) as { status: string }).status, 'running');
    const refused = await fetch(task, { method: 'DELETE', headers });
    assert.equal(refused.status, 409);
    assert.equal(errorCode(await refused.json()), 'InvalidAction.RunningTaskDeletion');

    const second = (await post(server, { model: SEEDANCE_2, content: [text] })).json as { id: string };
    const deleted = await fetch(`${server.baseUrl}/contents/generations/tasks/${second.id}`, {
      method: 'DELETE',
      headers,
    });
    assert.deepEqual([deleted.status, await deleted.json()], [200, {}]);
    assert.equal(server.statusOf(second.id), 'cancelled');
    const unknown = await fetch(`${server.baseUrl}/contents/generations/tasks/cgt-20260101000000-zzzzz`, {
      headers,
    });
    assert.equal(unknown.status, 404);
  });

  it('the finished video is a real MP4 of the model’s size, 24 × duration + 1 frames, mono sound', async () => {
    const server = await fake();
    server.pollsRunning = 0;
    const headers = { authorization: `Bearer ${KEY}` };
    const created = (
      await post(server, {
        model: SEEDANCE_2,
        content: [text],
        resolution: '480p',
        ratio: '16:9',
        duration: 4,
      })
    ).json as { id: string };
    let task: { status: string; content?: { video_url: string }; ratio?: string } = { status: 'queued' };
    while (task.status !== 'succeeded') {
      task = (await (
        await fetch(`${server.baseUrl}/contents/generations/tasks/${created.id}`, { headers })
      ).json()) as typeof task;
    }
    const withKey = await fetch(task.content?.video_url ?? '', { headers });
    assert.equal(withKey.status, 400, 'the signed link takes no other credentials');
    const path = join(dir, 'fake-output.mp4');
    await writeFile(path, Buffer.from(await (await fetch(task.content?.video_url ?? '')).arrayBuffer()));
    const facts = await mp4Facts(path);
    assert.deepEqual([facts.video?.width, facts.video?.height, facts.video?.frames], [864, 496, 97]);
    assert.equal(facts.audio?.channels, 1);
  });
});

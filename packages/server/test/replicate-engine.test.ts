/**
 * The `replicate` engine against the strict fake of Replicate's API (test/fakes/replicate-server.ts), over real
 * HTTP, with `bytedance/seedance-1-pro` as the model: every mode rendered and conformed exactly, the exact
 * prediction input each job becomes, progress from the prediction's logs, 429s and 5xx, refusals and failures,
 * cancel on abort and timeout, `check()`, the key kept to Replicate's own host and out of every message, and
 * the capabilities a template declares. Then the fake itself, refusing what Replicate refuses.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { ANY_INPUT, unsupportedInput } from '../src/domain/engine-capabilities.js';
import { TaskFailure } from '../src/domain/errors.js';
import type { GenerationParams } from '../src/domain/generation-request.js';
import { getModel } from '../src/domain/models.js';
import { createEngines } from '../src/engines/create-engines.js';
import { capabilitiesOf, type EngineOptions } from '../src/engines/engine-types.js';
import { parseEnginesConfig } from '../src/engines/engines-file.js';
import { ReplicateEngine } from '../src/engines/replicate/replicate-engine.js';
import {
  logsProgress,
  outputVideoUrl,
  parsePrediction,
  predictionState,
} from '../src/engines/replicate/replicate-job.js';
import type { ReplicateOptions } from '../src/engines/replicate/replicate-options.js';
import { MAX_INLINE_BYTES } from '../src/engines/replicate/replicate-request.js';
import type { RenderJob } from '../src/ports/engine.js';
import {
  FakeReplicate,
  FLAGGED_WORD,
  MODEL_FAILURE,
  SEEDANCE_VERSION,
  SENSITIVE_ERROR,
} from './fakes/replicate-server.js';
import { docsExample } from './helpers/docs-examples.js';
import { type GridAssets, writeGridAssets } from './helpers/engine-grid.js';
import { generationParams } from './helpers/generation-params.js';
import {
  assertContractVideo,
  assertProgressRisesToOne,
  jobMaker,
  renderContext,
} from './helpers/render-jobs.js';
import { until } from './helpers/until.js';

const KEY = 'r8_TestKey4fJ9qLm2Xv7Rt1Bn6Wc3Zp8Hs5';
const MODEL = 'bytedance/seedance-1-pro';
const CREATE_PATH = `/v1/models/${MODEL}/predictions`;
/** bytedance/seedance-1-pro's input, as docs/engines/replicate.md's example gives it. */
const SEEDANCE_INPUT = {
  prompt: '{{prompt}}',
  image: '{{image}}',
  last_frame_image: '{{last_image}}',
  duration: '{{duration}}',
  resolution: '{{resolution}}',
  aspect_ratio: '{{aspect_ratio}}',
  fps: 24,
  camera_fixed: false,
  seed: '{{seed}}',
};
/** What the model makes, as the example lists it. */
const SEEDANCE_MAPPING = {
  durations: [3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
  resolutions: ['480p', '720p', '1080p'],
  aspect_ratios: ['16:9', '4:3', '1:1', '3:4', '9:16', '21:9', '9:21'],
};

let dir: string;
let assets: GridAssets;
let fake: FakeReplicate;

const replicateJob = jobMaker(() => dir, { taskPrefix: 'task-replicate', duration: 4, seed: 1234 });

function options(overrides: Partial<ReplicateOptions> = {}): ReplicateOptions {
  return {
    type: 'replicate',
    base_url: fake.url,
    api_key: KEY,
    model: MODEL,
    input: SEEDANCE_INPUT,
    ...SEEDANCE_MAPPING,
    poll_interval_ms: 5,
    ...overrides,
  };
}

function engine(overrides: Partial<ReplicateOptions> = {}): ReplicateEngine {
  return new ReplicateEngine('seedance', options(overrides), { baseDir: dir });
}

async function taskFailure(promise: Promise<unknown>): Promise<TaskFailure> {
  const error = await promise.then(
    () => assert.fail('expected the render to fail'),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof TaskFailure, `a TaskFailure, got ${String(error)}`);
  assert.ok(!error.message.includes(KEY), `the key stays out of: ${error.message}`);
  return error;
}

async function dataUrl(path: string, type: string): Promise<string> {
  return `data:${type};base64,${(await readFile(path)).toString('base64')}`;
}

function createdInput(prompt: string): Record<string, unknown> {
  const create = fake.creates.find((c) => (c.body.input as { prompt?: unknown }).prompt === prompt);
  assert.ok(create, `a prediction was created for "${prompt}"`);
  return create.body.input as Record<string, unknown>;
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-replicate-engine-'));
  assets = await writeGridAssets(dir);
  fake = await FakeReplicate.start({ apiKey: KEY, cacheDir: join(dir, 'cache') });
});

beforeEach(() => {
  fake.outcome = 'succeed';
  fake.outputAsList = false;
  fake.foreignGetUrls = false;
  fake.interruptions.length = 0;
});

after(async () => {
  await fake.close();
  await rm(dir, { recursive: true, force: true });
});

describe('replicate engine: rendering', () => {
  it('renders every mode, conformed exactly, from the input the template maps each job to', async () => {
    const text = replicateJob({ prompt: 'a red kite over green hills', quality: '480p', ratio: '16:9' });
    const firstFrame = replicateJob({
      model: 'videogen-2.0-fast-image-to-video',
      prompt: 'the lighthouse, camera pushing in',
      quality: '480p',
      ratio: '1:1',
      images: [assets.wide],
    });
    const firstAndLast = replicateJob({
      model: 'videogen-2.0-image-to-video',
      prompt: 'from day to night',
      quality: '480p',
      ratio: '4:3',
      images: [assets.wide, assets.tall],
    });
    const reference = replicateJob({
      model: 'videogen-2.0-reference-to-video',
      prompt: 'the red figure walks through the blue field',
      quality: '480p',
      ratio: '21:9',
      images: [assets.tall, assets.wide],
      audios: [assets.audio],
    });
    const contexts = new Map<RenderJob, ReturnType<typeof renderContext>>();
    await Promise.all(
      [text, firstFrame, firstAndLast, reference].map((job) => {
        const context = renderContext();
        contexts.set(job, context);
        // The reference job has more than the model takes: only with `drop` does it render.
        return engine(job === reference ? { unsupported_inputs: 'drop' } : {}).render(job, context);
      }),
    );
    for (const [job, context] of contexts) {
      await assertContractVideo(job);
      assertProgressRisesToOne(context.progress);
      // The fake's tqdm bar at 2 of 4 steps, as generation's 90 % share.
      assert.ok(context.progress.includes(0.9 * 0.5), `progress from the logs: ${context.progress}`);
    }

    const wide = await dataUrl(assets.wide.path, 'image/png');
    const tall = await dataUrl(assets.tall.path, 'image/jpeg');
    const common = { fps: 24, camera_fixed: false, seed: 1234 };
    assert.deepEqual(createdInput(text.params.prompt), {
      prompt: text.params.prompt,
      duration: 4,
      resolution: '480p',
      aspect_ratio: '16:9',
      ...common,
    });
    assert.deepEqual(createdInput(firstFrame.params.prompt), {
      prompt: firstFrame.params.prompt,
      image: wide,
      duration: 4,
      resolution: '480p',
      aspect_ratio: '1:1',
      ...common,
    });
    assert.deepEqual(createdInput(firstAndLast.params.prompt), {
      prompt: firstAndLast.params.prompt,
      image: wide,
      last_frame_image: tall,
      duration: 4,
      resolution: '480p',
      aspect_ratio: '4:3',
      ...common,
    });
    // Reference mode: its first image is the model's image; the second and the audio have no place (dropped),
    // and the audio is laid under the result.
    assert.deepEqual(createdInput(reference.params.prompt), {
      prompt: reference.params.prompt,
      image: tall,
      duration: 4,
      resolution: '480p',
      aspect_ratio: '21:9',
      ...common,
    });

    const creates = fake.requests.filter((request) => request.route === 'create');
    assert.equal(creates.length, 4);
    for (const request of creates) {
      assert.equal(request.path, CREATE_PATH);
      assert.equal(request.authorization, `Bearer ${KEY}`);
      assert.equal(request.contentType, 'application/json');
      assert.equal(request.prefer, undefined, 'no Prefer: wait');
      assert.equal(request.status, 201);
    }
    assert.deepEqual(
      fake.creates.map((create) => Object.keys(create.body)),
      [['input'], ['input'], ['input'], ['input']],
    );
    assert.ok(fake.downloads.length >= 4);
    for (const download of fake.downloads) {
      assert.equal(download.authorization, undefined, 'no key sent to the delivery host');
    }
  });

  it('maps duration, resolution and ratio to the nearest the model takes, and adaptive to the image', async () => {
    // Only the input is looked at here: the predictions fail, so no video is made.
    fake.outcome = 'fail';
    const jobs = [
      replicateJob({
        prompt: 'long and tall',
        model: 'videogen-2.0-fast-text-to-video',
        quality: '1080p',
        ratio: '9:16',
        duration: 15,
      }),
      replicateJob({ prompt: 'thirteen seconds', quality: '720p', ratio: '21:9', duration: 13 }),
      replicateJob({
        prompt: 'adaptive to a portrait',
        model: 'videogen-2.0-image-to-video',
        ratio: 'adaptive',
        images: [assets.tall],
      }),
    ];
    for (const job of jobs) await taskFailure(engine().render(job, renderContext()));
    const mapped = jobs.map((job) => {
      const { duration, resolution, aspect_ratio } = createdInput(job.params.prompt);
      return [duration, resolution, aspect_ratio];
    });
    assert.deepEqual(mapped, [
      [12, '1080p', '9:16'],
      [12, '720p', '21:9'],
      [4, '480p', '3:4'],
    ]);
  });

  it('runs `owner/name:version` with POST /v1/predictions and its version', async () => {
    const job = replicateJob({ prompt: 'a versioned kite' });
    await engine({ model: `${MODEL}:${SEEDANCE_VERSION}` }).render(job, renderContext());
    await assertContractVideo(job);
    const create = fake.creates.at(-1);
    assert.equal(create?.path, '/v1/predictions');
    assert.deepEqual(Object.keys(create?.body ?? {}), ['version', 'input']);
    assert.equal(create?.body.version, SEEDANCE_VERSION);
  });

  it('takes the first video of a list output, and polls under its base URL whatever urls.get says', async () => {
    fake.outputAsList = true;
    fake.foreignGetUrls = true;
    const job = replicateJob({ prompt: 'a list of outputs' });
    const before = fake.downloads.length;
    await engine().render(job, renderContext());
    await assertContractVideo(job);
    const downloads = fake.downloads.slice(before);
    assert.equal(downloads.length, 1);
    assert.match(downloads[0]?.path ?? '', /\/output\.mp4$/);
    assert.equal(downloads[0]?.authorization, undefined);
    assert.equal(fake.requests.filter((request) => request.path.startsWith('delivery:')).length, 0);
  });

  it("builds every path under the base URL, a proxy's prefix included", async () => {
    // A bad prefix proves the paths are built under the base URL: the fake knows no such routes.
    const failure = await taskFailure(
      engine({ base_url: `${fake.url}/proxy/` }).render(replicateJob(), renderContext()),
    );
    assert.equal(failure.code, 'upstream_error');
    assert.match(
      failure.message,
      /POST \/proxy\/v1\/models\/bytedance\/seedance-1-pro\/predictions answered HTTP 404/,
    );
  });
});

describe('replicate engine: retries and failures', () => {
  it('waits out a 429 for its Retry-After, then creates one prediction', async () => {
    fake.interruptions.push({ route: 'create', status: 429, retryAfter: '1' });
    const before = fake.requests.length;
    const job = replicateJob({ prompt: 'throttled at first' });
    await engine().render(job, renderContext());
    await assertContractVideo(job);
    const creates = fake.requests.slice(before).filter((request) => request.route === 'create');
    assert.deepEqual(
      creates.map((request) => request.status),
      [429, 201],
    );
    const waited = (creates[1]?.at ?? 0) - (creates[0]?.at ?? 0);
    assert.ok(waited >= 1000, `waited ${waited} ms for Retry-After: 1`);
    assert.equal(fake.creates.filter((create) => createdPrompt(create.body) === job.params.prompt).length, 1);
  });

  it('retries a 5xx on a poll', async () => {
    fake.interruptions.push({ route: 'poll', status: 503 });
    const before = fake.requests.length;
    const job = replicateJob({ prompt: 'a gateway hiccup' });
    await engine().render(job, renderContext());
    await assertContractVideo(job);
    const polls = fake.requests.slice(before).filter((request) => request.route === 'poll');
    assert.equal(polls[0]?.status, 503);
    assert.ok(polls.slice(1).every((request) => request.status === 200));
  });

  it('does not send a create again after a 5xx, since the prediction may exist', async () => {
    fake.interruptions.push({ route: 'create', status: 503, afterCreating: true });
    const job = replicateJob({ prompt: 'created behind a failing gateway' });
    const failure = await taskFailure(engine().render(job, renderContext()));
    assert.equal(failure.code, 'upstream_unavailable');
    assert.match(failure.message, /HTTP 503.*not sent again/);
    assert.equal(fake.creates.filter((create) => createdPrompt(create.body) === job.params.prompt).length, 1);
  });

  it('fails a flagged prediction with upstream_refused and Replicate message, not retried', async () => {
    const job = replicateJob({ prompt: `a scene with ${FLAGGED_WORD}` });
    const failure = await taskFailure(engine().render(job, renderContext()));
    assert.equal(failure.code, 'upstream_refused');
    assert.equal(failure.message, `replicate engine "seedance": ${SENSITIVE_ERROR}`);
    assert.equal(fake.creates.filter((create) => createdPrompt(create.body) === job.params.prompt).length, 1);
  });

  it('fails an input Replicate refuses at creation with upstream_refused and its validation message', async () => {
    const job = replicateJob({ prompt: 'a duration as text' });
    const failure = await taskFailure(
      engine({ input: { ...SEEDANCE_INPUT, duration: '{{duration|text}}' } }).render(job, renderContext()),
    );
    assert.equal(failure.code, 'upstream_refused');
    assert.equal(
      failure.message,
      `replicate engine "seedance": POST /${CREATE_PATH.slice(1)} answered HTTP 422 Input validation failed: ` +
        'input.duration: Invalid type. Expected: integer, given: string',
    );
  });

  it('fails a failed prediction with upstream_error and its error', async () => {
    fake.outcome = 'fail';
    const failure = await taskFailure(engine().render(replicateJob(), renderContext()));
    assert.equal(failure.code, 'upstream_error');
    assert.equal(failure.message, `replicate engine "seedance": ${MODEL_FAILURE}`);
  });

  it('fails an unknown model with upstream_error, quoting Replicate', async () => {
    const failure = await taskFailure(
      engine({ model: 'bytedance/no-such-model' }).render(replicateJob(), renderContext()),
    );
    assert.equal(failure.code, 'upstream_error');
    assert.match(failure.message, /HTTP 404: \{"detail":"The requested resource could not be found\."/);
  });

  it('refuses assets larger than Replicate takes inline before sending anything', async () => {
    const huge = join(dir, 'huge-image');
    await writeFile(huge, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    await truncate(huge, MAX_INLINE_BYTES + 1);
    const creates = fake.creates.length;
    const job = replicateJob({ model: 'videogen-2.0-image-to-video', images: [huge] });
    const failure = await taskFailure(engine().render(job, renderContext()));
    assert.equal(failure.code, 'invalid_asset');
    assert.match(failure.message, /10000001 bytes; Replicate takes at most 10000000 bytes inline/);
    assert.equal(fake.creates.length, creates);
  });

  it('cancels the prediction when the task is aborted', async () => {
    fake.outcome = 'never-finish';
    const controller = new AbortController();
    const reason = new Error('cancelled by the client');
    const job = replicateJob({ prompt: 'cancelled while it runs' });
    const running = engine().render(job, renderContext(controller.signal));
    await until(
      () => fake.running.some((id) => createdPromptOf(id) === job.params.prompt),
      'the prediction running',
    );
    const id = fake.running.find((running) => createdPromptOf(running) === job.params.prompt) as string;
    await until(() => fake.prediction(id)?.status === 'processing', 'the prediction processing');
    controller.abort(reason);
    await assert.rejects(running, (error) => error === reason);
    assert.deepEqual(fake.cancelled.at(-1), id);
    assert.equal(fake.prediction(id)?.status, 'canceled');
  });

  it('cancels the prediction when the time limit runs out, and fails with timeout', async () => {
    fake.outcome = 'never-finish';
    const job = replicateJob({ prompt: 'never finishes' });
    const failure = await taskFailure(engine().render(job, renderContext(undefined, { deadlineMs: 300 })));
    assert.equal(failure.code, 'timeout');
    assert.match(failure.message, /still running upstream when the task's time limit ran out/);
    const id = fake.cancelled.at(-1) as string;
    assert.equal(createdPromptOf(id), job.params.prompt);
    assert.equal(fake.prediction(id)?.status, 'canceled');
  });
});

function createdPrompt(body: Record<string, unknown>): unknown {
  return (body.input as { prompt?: unknown } | undefined)?.prompt;
}

function createdPromptOf(id: string): unknown {
  return (fake.prediction(id)?.input as { prompt?: unknown } | undefined)?.prompt;
}

describe('replicate engine: check()', () => {
  it('passes with a good key and names the 401 with a bad one, without the key', async () => {
    const before = fake.requests.length;
    await engine().check(AbortSignal.timeout(10_000));
    const badKey = 'r8_BadKey0000aaaa1111bbbb2222cccc';
    const error = await engine({ api_key: badKey })
      .check(AbortSignal.timeout(10_000))
      .then(
        () => assert.fail('expected check() to fail'),
        (caught: unknown) => caught as Error,
      );
    assert.match(error.message, /^replicate engine "seedance": GET \/v1\/account answered HTTP 401/);
    assert.match(error.message, /You did not pass a valid authentication token/);
    assert.ok(!error.message.includes(badKey));
    const account = fake.requests.slice(before).filter((request) => request.route === 'account');
    assert.deepEqual(
      account.map((request) => [request.authorization, request.status]),
      [
        [`Bearer ${KEY}`, 200],
        [`Bearer ${badKey}`, 401],
      ],
    );
  });
});

describe('replicate engine: options and capabilities', () => {
  const params = (fields: Partial<GenerationParams>): GenerationParams =>
    generationParams({ seed: 1, generate_audio: false, ...fields });
  const seedance = { type: 'replicate', api_key: KEY, model: MODEL, input: SEEDANCE_INPUT } as const;

  it('takes what its template has placeholders for, and refuses the rest at creation', () => {
    const capabilities = capabilitiesOf(seedance);
    assert.deepEqual(capabilities, {
      firstFrame: true,
      lastFrame: true,
      referenceImages: 1,
      referenceVideos: 0,
      referenceAudios: 0,
      audio: false,
    });
    const reference = getModel('videogen-2.0-reference-to-video');
    const image = getModel('videogen-2.0-image-to-video');
    assert.equal(
      unsupportedInput(image, params({ image_urls: ['a', 'b'] }), capabilities, 'seedance'),
      undefined,
    );
    assert.match(
      unsupportedInput(reference, params({ image_urls: ['a', 'b'] }), capabilities, 'seedance')?.message ??
        '',
      /takes at most 1 reference image; this request has 2/,
    );
    assert.equal(
      unsupportedInput(reference, params({ video_urls: ['v'] }), capabilities, 'seedance')?.param,
      'video_urls',
    );
    const textOnly = capabilitiesOf({ ...seedance, input: { prompt: '{{prompt}}' } });
    assert.match(
      unsupportedInput(image, params({ image_urls: ['a'] }), textOnly, 'seedance')?.message ?? '',
      /takes no first-frame image/,
    );
    assert.deepEqual(capabilitiesOf({ ...seedance, unsupported_inputs: 'drop' }), ANY_INPUT);
  });

  it("accepts the docs' engines-file example, which renders against Replicate", async () => {
    const config = parseEnginesConfig(await docsExample('replicate-seedance'), 'engines.yaml', {
      REPLICATE_API_TOKEN: KEY,
    });
    const example = config.engines.get('seedance') as EngineOptions & ReplicateOptions;
    assert.equal(example.type, 'replicate');
    assert.equal(createEngines(config).get('seedance')?.name, 'seedance');
    const job = replicateJob({ prompt: 'the docs example' });
    await new ReplicateEngine(
      'seedance',
      { ...example, base_url: fake.url, poll_interval_ms: 5 },
      { baseDir: dir },
    ).render(job, renderContext());
    await assertContractVideo(job);
  });

  it('refuses a model that is not owner/name[:version] and an unknown placeholder', () => {
    const file = (engineOptions: Record<string, unknown>) => ({
      engines: { seedance: { ...seedance, ...engineOptions } },
      models: { 'videogen-2.0-text-to-video': 'seedance' },
    });
    assert.throws(
      () => parseEnginesConfig(file({ model: 'seedance-1-pro' }), 'engines.yaml', {}),
      /engines\.yaml: \/engines\/seedance\/model/,
    );
    assert.throws(
      () => parseEnginesConfig(file({ input: 'prompt' }), 'engines.yaml', {}),
      /\/engines\/seedance\/input/,
    );
    const config = parseEnginesConfig(file({ input: { prompt: '{{promt}}' } }), 'engines.yaml', {});
    assert.throws(
      () => createEngines(config),
      /\/engines\/seedance: input: unknown placeholder \{\{promt\}\}/,
    );
  });
});

describe('replicate predictions', () => {
  it('read progress from the last tqdm bar in the logs, as the SDKs do', () => {
    assert.equal(logsProgress('76%|████████      | 7568/10000 [00:33<00:10, 229.00it/s]'), 0.76);
    assert.equal(
      logsProgress(
        'Using seed: 1\n 10%|█         | 1/10 [00:01<00:09]\r 40%|████      | 4/10 [00:04<00:06]\n',
      ),
      0.4,
    );
    assert.equal(logsProgress('Loading weights\ngenerating'), undefined);
  });

  it('map the six statuses, refusals, and string or list outputs', () => {
    const prediction = (fields: Record<string, unknown>) =>
      parsePrediction({ id: 'p1', status: 'starting', logs: '', ...fields });
    const state = (fields: Record<string, unknown>) => {
      const parsed = prediction(fields);
      assert.ok(parsed);
      return predictionState(parsed);
    };
    assert.deepEqual(state({}), { state: 'queued' });
    assert.deepEqual(state({ status: 'processing' }), { state: 'running' });
    assert.deepEqual(state({ status: 'succeeded', output: 'https://replicate.delivery/a/out.mp4' }), {
      state: 'succeeded',
      result: 'https://replicate.delivery/a/out.mp4',
    });
    assert.deepEqual(state({ status: 'succeeded', output: null }), { state: 'succeeded' });
    assert.equal(state({ status: 'failed', error: SENSITIVE_ERROR }).failure?.refused, true);
    assert.equal(
      state({ status: 'failed', error: 'Prediction input failed validation: {"detail":[]}' }).failure
        ?.refused,
      true,
    );
    assert.equal(state({ status: 'failed', error: MODEL_FAILURE }).failure?.refused, false);
    assert.equal(state({ status: 'canceled' }).state, 'cancelled');
    assert.match(
      state({ status: 'aborted' }).failure?.message ?? '',
      /aborted on Replicate before it started/,
    );
    assert.equal(prediction({ status: 'queued' }), undefined);
    assert.equal(
      outputVideoUrl(['https://replicate.delivery/a/poster.webp', 'https://replicate.delivery/a/video.mp4']),
      'https://replicate.delivery/a/video.mp4',
    );
    assert.equal(outputVideoUrl(['https://replicate.delivery/a/out']), 'https://replicate.delivery/a/out');
  });
});

describe('the Replicate fake refuses what Replicate refuses', () => {
  const create = (body: unknown, headers: Record<string, string> = {}, path = CREATE_PATH) =>
    fetch(`${fake.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const problem = async (response: Response) => {
    assert.equal(response.headers.get('content-type'), 'application/problem+json');
    return (await response.json()) as {
      detail: string;
      title?: string;
      invalid_fields?: { type: string; field: string; description: string }[];
    };
  };

  it('a missing or wrong key: 401', async () => {
    for (const authorization of [undefined, `Bearer ${KEY}x`, KEY]) {
      const response = await fetch(`${fake.url}/v1/account`, {
        headers: authorization ? { authorization } : {},
      });
      assert.equal(response.status, 401);
      assert.deepEqual(await problem(response), {
        title: 'Unauthenticated',
        detail: 'You did not pass a valid authentication token',
        status: 401,
      });
    }
  });

  it('unknown top-level keys and a missing input: 422 invalid_fields', async () => {
    const response = await create({ model: MODEL, inptu: { prompt: 'p' } });
    assert.equal(response.status, 422);
    const body = await problem(response);
    assert.equal(body.title, 'Input validation failed');
    assert.deepEqual(
      body.invalid_fields?.map((field) => [field.type, field.field]),
      [
        ['required', ''],
        ['additional_property_not_allowed', ''],
        ['additional_property_not_allowed', ''],
      ],
    );
    assert.equal((await create({ version: SEEDANCE_VERSION, input: { prompt: 'p' } })).status, 422);
  });

  it("an input against the model's schema: 422; unknown keys inside input are ignored", async () => {
    const refused = [
      [{}, 'required', 'input'],
      [{ prompt: 'p', duration: '5' }, 'invalid_type', 'input.duration'],
      [{ prompt: 'p', duration: 13 }, 'number_lte', 'input.duration'],
      [{ prompt: 'p', resolution: '4k' }, 'enum', 'input.resolution'],
      [{ prompt: 'p', aspect_ratio: '2:1' }, 'enum', 'input.aspect_ratio'],
      [{ prompt: 'p', fps: 30 }, 'enum', 'input.fps'],
      [{ prompt: 'p', image: 'not a uri' }, 'format', 'input.image'],
    ] as const;
    for (const [input, type, field] of refused) {
      const response = await create({ input });
      assert.equal(response.status, 422, JSON.stringify(input));
      const body = await problem(response);
      assert.deepEqual(body.invalid_fields, [
        { type, field, description: body.invalid_fields?.[0]?.description },
      ]);
      assert.match(body.detail, new RegExp(`^- ${field.replace('.', '\\.')}: `));
    }
    const accepted = await create({ input: { prompt: 'p', guidance_scale: 7, seed: null } });
    assert.equal(accepted.status, 201);
    const prediction = (await accepted.json()) as { id: string; status: string; version: string };
    assert.equal(prediction.status, 'starting');
    assert.equal(prediction.version, 'hidden');
    const cancel = await fetch(`${fake.url}/v1/predictions/${prediction.id}/cancel`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}` },
    });
    assert.equal(((await cancel.json()) as { status: string }).status, 'canceled');
    // A prediction that has ended is answered as it is.
    const again = await fetch(`${fake.url}/v1/predictions/${prediction.id}/cancel`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}` },
    });
    assert.equal(again.status, 200);
    assert.equal(((await again.json()) as { status: string }).status, 'canceled');
    assert.equal(fake.cancelled.filter((id) => id === prediction.id).length, 1);
  });

  it('a bad Prefer, another media type, an unknown model, version or prediction', async () => {
    assert.equal((await create({ input: { prompt: 'p' } }, { prefer: 'wait=61' })).status, 422);
    assert.equal((await create('prompt=p', { 'content-type': 'text/plain' })).status, 415);
    const unknownModel = await create({ input: { prompt: 'p' } }, {}, '/v1/models/acme/nothing/predictions');
    assert.equal(unknownModel.status, 404);
    assert.deepEqual(await problem(unknownModel), {
      detail: 'The requested resource could not be found.',
      status: 404,
    });
    const badVersion = await create(
      { version: 'f'.repeat(64), input: { prompt: 'p' } },
      {},
      '/v1/predictions',
    );
    assert.equal(badVersion.status, 422);
    assert.equal((await problem(badVersion)).title, 'Invalid version or not permitted');
    const unknown = await fetch(`${fake.url}/v1/predictions/nosuchprediction`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    assert.equal(unknown.status, 404);
  });

  it('answers 429 with the throttled body and Retry-After', async () => {
    fake.interruptions.push({ route: 'account', status: 429, retryAfter: '30' });
    const response = await fetch(`${fake.url}/v1/account`, { headers: { authorization: `Bearer ${KEY}` } });
    assert.equal(response.status, 429);
    assert.equal(response.headers.get('retry-after'), '30');
    assert.deepEqual(await response.json(), {
      detail: 'Request was throttled. Your rate limit resets in ~30s.',
    });
  });
});

describe('replicate engine: sound', () => {
  it("passes generate_audio through {{generate_audio}} and keeps the model's track; without it, none", async () => {
    const sd2 = {
      model: 'bytedance/seedance-2.0-fast',
      input: {
        prompt: '{{prompt}}',
        duration: '{{duration}}',
        resolution: '{{resolution}}',
        aspect_ratio: '{{aspect_ratio}}',
        generate_audio: '{{generate_audio}}',
      },
      durations: [4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
      resolutions: ['480p', '720p'],
      aspect_ratios: ['16:9', '4:3', '1:1', '3:4', '9:16', '21:9'],
    };
    const loud = replicateJob({ prompt: 'a drum circle on a beach', quality: '480p', generateAudio: true });
    const quiet = replicateJob({ prompt: 'a silent snowfall', quality: '480p', generateAudio: false });
    for (const job of [loud, quiet]) await engine(sd2).render(job, renderContext());
    const sent = (prompt: string) =>
      fake.creates.find((c) => (c.body.input as { prompt?: unknown } | undefined)?.prompt === prompt)?.body
        .input as Record<string, unknown> | undefined;
    assert.equal(sent(loud.params.prompt)?.generate_audio, true);
    assert.equal(sent(quiet.params.prompt)?.generate_audio, false);
    assert.ok((await assertContractVideo(loud)).audio, "the model's soundtrack survives conforming");
    assert.equal((await assertContractVideo(quiet)).audio, undefined);
    assert.equal(capabilitiesOf({ type: 'replicate', api_key: KEY, ...sd2 }).audio, true);

    // The fake, as Replicate, refuses a generate_audio that is not a boolean.
    const textual = replicateJob({ prompt: 'a drum circle, as text', quality: '480p', generateAudio: true });
    const wrong = { ...sd2, input: { ...sd2.input, generate_audio: '{{generate_audio|text}}' } };
    const failure = await taskFailure(engine(wrong).render(textual, renderContext()));
    assert.match(failure.message, /generate_audio/);
  });
});

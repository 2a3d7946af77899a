/**
 * The `openai` engine speaking to OpenAI's Videos API (Sora 2), against a strict fake written from OpenAI's
 * API description (test/fakes/video-servers.ts): every model ID at every quality and aspect ratio, only the
 * parameters OpenAI takes, its sizes and durations, a reference image of exactly the size. Every job's request
 * is checked; a video is rendered and conformed only for the few jobs that between them have each model ID,
 * quality, orientation and size asked for (helpers/asked-videos.ts, helpers/engine-grid.ts).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TaskFailure } from '../src/domain/errors.js';
import { OpenAiEngine } from '../src/engines/openai/openai-engine.js';
import type { OpenAiOptions } from '../src/engines/openai/openai-options.js';
import type { RenderJob } from '../src/ports/engine.js';
import { FakeVideoServer, type RecordedCreate } from './fakes/video-servers.js';
import { askFor, createFor, startAskedServer } from './helpers/asked-videos.js';
import {
  coveringItems,
  describeJob,
  type GridAssets,
  gridFeatures,
  gridJobs,
  writeGridAssets,
} from './helpers/engine-grid.js';
import {
  assertContractVideo,
  assertProgressRisesToOne,
  makeJob,
  renderContext,
} from './helpers/render-jobs.js';

const KEY = 'sk-proj-Zq8vN3rT5wY1pL7xK2mB9cD4';

let dir: string;
let assets: GridAssets;
let fake: FakeVideoServer;
/** The same server, failing each video: what a job asks for, without a video made. */
let asked: FakeVideoServer;

function engine(options: Partial<OpenAiOptions> = {}): OpenAiEngine {
  return new OpenAiEngine(
    'sora',
    {
      type: 'openai',
      base_url: fake.url,
      api_key: KEY,
      model: 'sora-2-pro',
      poll_interval_ms: 10,
      ...options,
    },
    { baseDir: dir },
  );
}

async function post(body: FormData | string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${fake.url}/v1/videos`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, ...headers },
    body,
  });
}

function form(fields: Record<string, string>): FormData {
  const data = new FormData();
  for (const [name, value] of Object.entries(fields)) data.append(name, value);
  return data;
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-openai-dialect-'));
  assets = await writeGridAssets(dir);
  const options = { kind: 'openai', apiKey: KEY, cacheDir: join(dir, 'cache') } as const;
  [fake, asked] = await Promise.all([FakeVideoServer.start(options), startAskedServer(options)]);
});

after(async () => {
  await Promise.all([fake.close(), asked.close()]);
  await rm(dir, { recursive: true, force: true });
});

describe('the fake refuses what OpenAI refuses', () => {
  it('a seed, a size or duration OpenAI does not make, an integer seconds, a pro size on sora-2, a wrong key', async () => {
    const cases: [FormData | string, Record<string, string>, number, string][] = [
      [form({ model: 'sora-2', prompt: 'p', seed: '7' }), {}, 400, "Unknown parameter: 'seed'."],
      [form({ model: 'sora-2', prompt: 'p', size: '854x480' }), {}, 400, "Invalid value: '854x480'"],
      [form({ model: 'sora-2', prompt: 'p', seconds: '5' }), {}, 400, "Invalid value: '5'"],
      [form({ model: 'sora-2', prompt: 'p', size: '1792x1024' }), {}, 400, 'not supported by sora-2'],
      [
        JSON.stringify({ model: 'sora-2', prompt: 'p', seconds: 8 }),
        { 'content-type': 'application/json' },
        400,
        'got an integer',
      ],
      [
        form({ model: 'sora-2', prompt: 'p' }),
        { authorization: 'Bearer sk-wrong' },
        401,
        'Incorrect API key',
      ],
    ];
    for (const [body, headers, status, message] of cases) {
      const response = await post(body, headers);
      const text = await response.text();
      assert.equal(response.status, status, text);
      assert.ok(text.includes(message), text);
    }
  });

  it('a reference image that is not exactly the requested size', async () => {
    const data = form({ model: 'sora-2', prompt: 'p', size: '1280x720' });
    const { readFile } = await import('node:fs/promises');
    data.append(
      'input_reference',
      new Blob([await readFile(assets.wide.path)], { type: 'image/png' }),
      'a.png',
    );
    const response = await post(data);
    assert.equal(response.status, 400);
    assert.match(await response.text(), /Inpaint image must match the requested width and height/);
  });
});

describe('openai engine, server: openai', () => {
  /** Each grid job with the create request it made of the server that fails each video. */
  let grid: { readonly job: RenderJob; readonly request: RecordedCreate }[];
  before(async () => {
    const sora = engine({ base_url: asked.url });
    grid = await Promise.all(
      gridJobs(dir, assets, 'task-sora').map(async (job) => ({
        job,
        request: await askFor(sora, asked, job),
      })),
    );
  });

  it('asks for every model ID at every quality and aspect ratio, sending only what OpenAI takes', () => {
    for (const { job, request: create } of grid) {
      assert.ok(create.contentType.startsWith('multipart/form-data'), 'multipart, as the SDKs send it');
      assert.deepEqual(
        Object.keys(create.fields).sort(),
        ['model', 'prompt', 'seconds', 'size'],
        describeJob(job),
      );
      assert.equal(create.effective.seed, undefined, 'no seed: OpenAI has none');
      assert.ok(['4', '8', '12'].includes(String(create.fields.seconds)));
      const landscape = job.frame.width >= job.frame.height;
      const { width, height } = create.effective;
      assert.equal(width >= height, landscape, `${describeJob(job)}: asked ${width}x${height}`);
      if (job.images.length > 0) {
        assert.deepEqual(
          create.effective.image && [create.effective.image.width, create.effective.image.height],
          [width, height],
        );
      } else {
        assert.equal(create.effective.image, undefined);
      }
    }
  });

  it('renders a conformed video for a job of each model ID, quality, orientation and size asked for, with audio and two images', async () => {
    const sora = engine();
    const chosen = coveringItems(
      grid,
      (cell) => cell.job,
      ({ job, request }) => [...gridFeatures(job), `asked ${request.fields.size}`],
    );
    await Promise.all(
      chosen.map(async ({ job, request }) => {
        const ctx = renderContext();
        await sora.render(job, ctx);
        await assertContractVideo(job);
        assertProgressRisesToOne(ctx.progress);
        const create = createFor(fake, job);
        assert.deepEqual(
          [create.fields, create.effective],
          [request.fields, request.effective],
          `${describeJob(job)}: asked as when the video failed`,
        );
      }),
    );
  });

  it("keeps Sora 2's soundtrack with generate_audio and removes it without", async () => {
    const sora = engine();
    const loud = makeJob(dir, {
      quality: '720p',
      ratio: '16:9',
      prompt: 'a choir in a cave',
      generateAudio: true,
    });
    const quiet = makeJob(dir, {
      quality: '720p',
      ratio: '16:9',
      prompt: 'a quiet cave',
      generateAudio: false,
    });
    for (const job of [loud, quiet]) await sora.render(job, renderContext());
    assert.ok((await assertContractVideo(loud)).audio, "Sora's track survives conforming");
    assert.equal((await assertContractVideo(quiet)).audio, undefined, 'and is removed when not asked for');
  });

  it('asks sora-2 only for 1280x720 and 720x1280, and a 1080p portrait of sora-2-pro for 1024x1792', async () => {
    const sora2 = makeJob(dir, { quality: '1080p', ratio: '9:16', prompt: 'a 1080p portrait of sora-2' });
    const asked2 = await askFor(engine({ base_url: asked.url, model: 'sora-2' }), asked, sora2);
    assert.equal(asked2.fields.size, '720x1280');
    const pro = makeJob(dir, {
      quality: '1080p',
      ratio: '9:16',
      duration: 6,
      prompt: 'a 1080p portrait of sora-2-pro',
    });
    const askedPro = await askFor(engine({ base_url: asked.url }), asked, pro);
    assert.deepEqual([askedPro.fields.size, askedPro.fields.seconds], ['1024x1792', '8']);
  });

  it('sends no DELETE for a cancelled video, which OpenAI cannot stop', async () => {
    fake.outcome = 'never-finish';
    try {
      const controller = new AbortController();
      const reason = new Error('cancelled by the client');
      const ctx = renderContext(controller.signal, { onProgress: () => controller.abort(reason) });
      await assert.rejects(engine().render(makeJob(dir), ctx), (error) => error === reason);
      assert.equal(fake.requests.filter((r) => r.method === 'DELETE').length, 0);
    } finally {
      fake.outcome = 'complete';
    }
  });

  it('fails with upstream_error quoting OpenAI when it refuses the size asked for', async () => {
    const failure = await engine({ model: 'sora-2', sizes: ['1792x1024'] })
      .render(makeJob(dir), renderContext())
      .then(
        () => assert.fail('expected a failure'),
        (error: unknown) => error,
      );
    assert.ok(failure instanceof TaskFailure);
    assert.equal(failure.code, 'upstream_error');
    assert.match(failure.message, /POST \/v1\/videos answered HTTP 400: .*not supported by sora-2/);
  });

  it('refuses at start extra_body fields and frame settings OpenAI would refuse', () => {
    assert.throws(() => engine({ extra_body: { seed: null } }), /extra_body: .*seed/);
    assert.throws(
      () => engine({ extra_body: { quality: 'high' } }),
      /refuses any other parameter \(quality\)/,
    );
    assert.throws(() => engine({ fps: 16 }), /fps, frame_step: OpenAI takes no frame rate/);
  });

  it('check() proves the key with GET /v1/models and that it can use the model', async () => {
    await engine().check(AbortSignal.timeout(10_000));
    await assert.rejects(
      engine({ model: 'sora-3' }).check(AbortSignal.timeout(10_000)),
      /cannot use the model "sora-3"/,
    );
    await assert.rejects(engine({ api_key: 'sk-wrong' }).check(AbortSignal.timeout(10_000)), /HTTP 401/);
  });
});

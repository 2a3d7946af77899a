/**
 * The `openai` engine speaking to SGLang Diffusion serving Wan 2.2, against a strict fake written from
 * SGLang's video_api.py and protocol.py (test/fakes/video-servers.ts): every model ID at every quality and
 * aspect ratio through a T2V and an I2V server, the seed and settings honoured on JSON and on multipart
 * (inside `extra_body`), and `DELETE` only forgetting a video. Every job's request is checked; a video is
 * rendered and conformed only for the few jobs that between them have each model ID, quality, orientation
 * and size asked for (helpers/asked-videos.ts, helpers/engine-grid.ts).
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
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
import { assertContractVideo, makeJob, renderContext } from './helpers/render-jobs.js';

/** The docs' sizes for Wan 2.2 A14B, and its own frame rate. */
const WAN_SIZES = ['1280x720', '720x1280', '832x480', '480x832'];

let dir: string;
let assets: GridAssets;
let t2v: FakeVideoServer;
let i2v: FakeVideoServer;
/** The same servers, failing each video: what every job of the grid asks for, without a video made. */
let askedT2v: FakeVideoServer;
let askedI2v: FakeVideoServer;

function engine(server: FakeVideoServer, options: Partial<OpenAiOptions> = {}): OpenAiEngine {
  return new OpenAiEngine(
    'sglang-wan',
    {
      type: 'openai',
      server: 'sglang',
      base_url: server.url,
      model: server.servedModel,
      sizes: WAN_SIZES,
      fps: 16,
      frame_step: 4,
      extra_body: { num_inference_steps: 40, guidance_scale: 4.0 },
      poll_interval_ms: 10,
      ...options,
    },
    { baseDir: dir },
  );
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-sglang-dialect-'));
  assets = await writeGridAssets(dir);
  const cacheDir = join(dir, 'cache');
  const i2vOptions = {
    kind: 'sglang',
    cacheDir,
    task: 'I2V',
    servedModel: 'Wan-AI/Wan2.2-I2V-A14B-Diffusers',
  } as const;
  [t2v, i2v, askedT2v, askedI2v] = await Promise.all([
    FakeVideoServer.start({ kind: 'sglang', cacheDir, task: 'T2V' }),
    FakeVideoServer.start(i2vOptions),
    startAskedServer({ kind: 'sglang', cacheDir, task: 'T2V' }),
    startAskedServer(i2vOptions),
  ]);
});

after(async () => {
  await Promise.all([t2v, i2v, askedT2v, askedI2v].map((server) => server.close()));
  await rm(dir, { recursive: true, force: true });
});

describe('the fake refuses what SGLang Diffusion refuses and drops what it drops', () => {
  it('a size with a star, a T2V model given an image, an I2V model without one, a seed as a form field', async () => {
    const json = (server: FakeVideoServer, body: unknown) =>
      fetch(`${server.url}/v1/videos`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const star = await json(t2v, { prompt: 'p', size: '1280*720' });
    assert.equal(star.status, 400);
    assert.match(await star.text(), /size must be formatted as positive WIDTHxHEIGHT/);
    const noImage = await json(i2v, { prompt: 'p' });
    assert.equal(noImage.status, 400);

    const withImage = new FormData();
    withImage.append('prompt', 'p');
    withImage.append(
      'input_reference',
      new Blob([await readFile(assets.wide.path)], { type: 'image/png' }),
      'a.png',
    );
    const refused = await fetch(`${t2v.url}/v1/videos`, { method: 'POST', body: withImage });
    assert.equal(refused.status, 400);
    assert.match(await refused.text(), /input_reference is not supported for T2V models/);

    const separateSeed = new FormData();
    separateSeed.append('prompt', 'p');
    separateSeed.append('seed', '7');
    separateSeed.append(
      'input_reference',
      new Blob([await readFile(assets.wide.path)], { type: 'image/png' }),
      'a.png',
    );
    const dropped = await fetch(`${i2v.url}/v1/videos`, { method: 'POST', body: separateSeed });
    assert.equal(dropped.status, 200);
    assert.equal(
      i2v.creates.at(-1)?.effective.seed,
      42,
      'a seed outside extra_body is not read: the default',
    );
  });
});

describe('openai engine, server: sglang', () => {
  /** Each grid job with the create request it made of the servers that fail each video. */
  let grid: { readonly job: RenderJob; readonly request: RecordedCreate }[];
  before(async () => {
    grid = await Promise.all(
      gridJobs(dir, assets, 'task-sglang').map(async (job) => {
        const server = job.images.length > 0 ? askedI2v : askedT2v;
        return { job, request: await askFor(engine(server), server, job) };
      }),
    );
  });

  it('asks for every model ID at every quality and aspect ratio with the seed and settings honoured', () => {
    for (const { job, request: create } of grid) {
      assert.equal(create.effective.seed, job.params.seed, `${describeJob(job)}: the seed is the request's`);
      assert.deepEqual(create.effective.settings, { num_inference_steps: 40, guidance_scale: 4 });
      assert.equal(create.effective.fps, 16);
      assert.equal((create.effective.frames - 1) % 4, 0, 'a 4n+1 frame count');
      assert.ok(create.effective.frames >= job.params.duration * 16);
      assert.ok(WAN_SIZES.includes(`${create.effective.width}x${create.effective.height}`));
      if (job.images.length > 0) {
        assert.ok(create.contentType.startsWith('multipart/form-data'));
        assert.deepEqual(
          Object.keys(create.fields).sort(),
          ['extra_body', 'fps', 'model', 'num_frames', 'prompt', 'seconds', 'size'],
          'only the form fields every release reads',
        );
        const image = create.effective.image;
        assert.deepEqual(image && [image.width, image.height], [
          create.effective.width,
          create.effective.height,
        ]);
      } else {
        assert.ok(create.contentType.startsWith('application/json'));
      }
    }
  });

  it('renders a conformed video for a job of each model ID, quality, orientation and size asked for, with audio and two images', async () => {
    const chosen = coveringItems(
      grid,
      (cell) => cell.job,
      ({ job, request }) => [
        ...gridFeatures(job),
        `asked ${request.effective.width}x${request.effective.height}`,
      ],
    );
    await Promise.all(
      chosen.map(async ({ job, request }) => {
        const server = job.images.length > 0 ? i2v : t2v;
        await engine(server).render(job, renderContext());
        await assertContractVideo(job);
        const create = createFor(server, job);
        assert.deepEqual(
          [create.fields, create.effective],
          [request.fields, request.effective],
          `${describeJob(job)}: asked as when the video failed`,
        );
      }),
    );
  });

  it('sends a DELETE that only forgets a cancelled video (SGLang cannot stop it)', async () => {
    t2v.outcome = 'never-finish';
    try {
      const controller = new AbortController();
      const reason = new Error('cancelled');
      const server = t2v;
      const seen = server.requests.length;
      const rendering = engine(server).render(makeJob(dir), renderContext(controller.signal));
      const polled = () =>
        server.requests.slice(seen).some((r) => r.method === 'GET' && r.path.startsWith('/v1/videos/'));
      while (!polled()) await new Promise((resolve) => setImmediate(resolve));
      controller.abort(reason);
      await assert.rejects(rendering, (error) => error === reason);
      assert.equal(server.deletes.length, 1);
      assert.equal(server.deletes[0]?.stopped, false);
    } finally {
      t2v.outcome = 'complete';
    }
  });

  it('check() reads GET /v1/models', async () => {
    await engine(t2v).check(AbortSignal.timeout(10_000));
    assert.equal(t2v.requests.at(-1)?.path, '/v1/models');
  });
});

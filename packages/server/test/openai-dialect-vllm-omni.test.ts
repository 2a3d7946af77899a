/**
 * The `openai` engine speaking to vLLM-Omni serving Wan 2.2, against a strict fake written from vLLM-Omni's
 * api_server.py and protocol/videos.py (test/fakes/video-servers.ts): form data always, the served model
 * name, every model ID at every quality and aspect ratio, a failed video's error status read at once, and a
 * `DELETE` that stops a running video. Every job's request is checked; a video is rendered and conformed
 * only for the few jobs that between them have each model ID, quality and orientation (helpers/asked-videos.ts,
 * helpers/engine-grid.ts).
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
import { assertContractVideo, makeJob, renderContext } from './helpers/render-jobs.js';

const KEY = 'vllm-key-4f9a2c7e1b3d5a8f';
const SERVED = 'Wan-AI/Wan2.2-T2V-A14B-Diffusers';

let dir: string;
let assets: GridAssets;
let fake: FakeVideoServer;
/** The same server, failing each video: what every job of the grid asks for, without a video made. */
let asked: FakeVideoServer;

function engine(options: Partial<OpenAiOptions> = {}): OpenAiEngine {
  return new OpenAiEngine(
    'vllm-wan',
    {
      type: 'openai',
      server: 'vllm-omni',
      base_url: fake.url,
      api_key: KEY,
      model: SERVED,
      fps: 16,
      frame_step: 4,
      extra_body: { num_inference_steps: 40, guidance_scale: 4.0, flow_shift: 5.0 },
      poll_interval_ms: 10,
      ...options,
    },
    { baseDir: dir },
  );
}

async function failure(promise: Promise<unknown>): Promise<TaskFailure> {
  const error = await promise.then(
    () => assert.fail('expected a failure'),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof TaskFailure, String(error));
  return error;
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-vllm-dialect-'));
  assets = await writeGridAssets(dir);
  const options = {
    kind: 'vllm-omni',
    apiKey: KEY,
    servedModel: SERVED,
    cacheDir: join(dir, 'cache'),
  } as const;
  [fake, asked] = await Promise.all([FakeVideoServer.start(options), startAskedServer(options)]);
});

after(async () => {
  await Promise.all([fake.close(), asked.close()]);
  await rm(dir, { recursive: true, force: true });
});

describe('the fake refuses what vLLM-Omni refuses and ignores what it ignores', () => {
  it('a JSON body, another model name, a wrong key; an undeclared field is ignored', async () => {
    const headers = { authorization: `Bearer ${KEY}` };
    const json = await fetch(`${fake.url}/v1/videos`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'p', model: SERVED }),
    });
    assert.equal(json.status, 400);
    assert.equal(((await json.json()) as { error: { param: string } }).error.param, 'body.prompt');

    const other = new FormData();
    other.append('prompt', 'p');
    other.append('model', 'sora-2');
    const mismatch = await fetch(`${fake.url}/v1/videos`, { method: 'POST', headers, body: other });
    assert.equal(mismatch.status, 400);
    assert.match(await mismatch.text(), /Model mismatch: request specifies 'sora-2'/);

    const unauthorized = await fetch(`${fake.url}/v1/models`, { headers: { authorization: 'Bearer nope' } });
    assert.equal(unauthorized.status, 401);
    assert.deepEqual(await unauthorized.json(), { error: 'Unauthorized' });

    const extra = new FormData();
    extra.append('prompt', 'p');
    extra.append('quality', 'high');
    const ignored = await fetch(`${fake.url}/v1/videos`, { method: 'POST', headers, body: extra });
    assert.equal(ignored.status, 200);
    assert.deepEqual(fake.creates.at(-1)?.effective.settings, {}, 'quality is not a vLLM-Omni setting');
  });
});

describe('openai engine, server: vllm-omni', () => {
  /** Each grid job with the create request it made of the server that fails each video. */
  let grid: { readonly job: RenderJob; readonly request: RecordedCreate }[];
  before(async () => {
    const wan = engine({ base_url: asked.url });
    grid = await Promise.all(
      gridJobs(dir, assets, 'task-vllm').map(async (job) => ({
        job,
        request: await askFor(wan, asked, job),
      })),
    );
  });

  it('asks for every model ID at every quality and aspect ratio as form data with the seed and settings', () => {
    for (const { job, request: create } of grid) {
      assert.ok(create.contentType.startsWith('multipart/form-data'));
      assert.equal(create.effective.model, SERVED);
      assert.equal(create.effective.seed, job.params.seed);
      assert.deepEqual(create.effective.settings, {
        num_inference_steps: 40,
        guidance_scale: 4,
        flow_shift: 5,
      });
      assert.equal(create.effective.fps, 16);
      assert.equal((create.effective.frames - 1) % 4, 0, 'a 4n+1 frame count');
      assert.deepEqual(
        [create.effective.width, create.effective.height],
        [job.frame.width, job.frame.height],
      );
      if (job.images.length > 0) {
        const image = create.effective.image;
        assert.deepEqual(
          image && [image.width, image.height],
          [job.frame.width, job.frame.height],
          'not stretched',
        );
      }
    }
  });

  it('renders a conformed video for a job of each model ID, quality and orientation, with audio and two images', async () => {
    const wan = engine();
    const chosen = coveringItems(
      grid,
      (cell) => cell.job,
      (cell) => gridFeatures(cell.job),
    );
    await Promise.all(
      chosen.map(async ({ job, request }) => {
        await wan.render(job, renderContext());
        await assertContractVideo(job);
        const create = createFor(fake, job);
        assert.deepEqual(
          [create.fields, create.effective],
          [request.fields, request.effective],
          `${describeJob(job)}: asked as when the video failed`,
        );
      }),
    );
  });

  it('fails at once with the server reason when a video fails, though its GET answers HTTP 500', async () => {
    fake.outcome = 'fail';
    try {
      const started = Date.now();
      const failed = await failure(
        engine().render(makeJob(dir), renderContext(undefined, { deadlineMs: 120_000 })),
      );
      assert.equal(failed.code, 'upstream_error');
      assert.match(failed.message, /the server failed the video: CUDA out of memory/);
      assert.ok(Date.now() - started < 60_000, 'not retried until the time limit');
      assert.equal(fake.requests.filter((r) => r.status === 500).length, 1, 'the failed video was read once');
    } finally {
      fake.outcome = 'complete';
    }
  });

  it('stops a cancelled video with DELETE, asking again while vLLM-Omni is still cancelling (409)', async () => {
    fake.outcome = 'never-finish';
    fake.slowCancel = true;
    try {
      const controller = new AbortController();
      const reason = new Error('cancelled');
      const seen = fake.requests.length;
      const rendering = engine().render(makeJob(dir), renderContext(controller.signal));
      const polled = () =>
        fake.requests.slice(seen).some((r) => r.method === 'GET' && r.path.startsWith('/v1/videos/'));
      while (!polled()) await new Promise((resolve) => setImmediate(resolve));
      controller.abort(reason);
      await assert.rejects(rendering, (error) => error === reason);
      assert.deepEqual(
        fake.requests.filter((r) => r.method === 'DELETE').map((r) => r.status),
        [409, 200],
      );
      const stopped = fake.deletes.at(-1);
      assert.equal(stopped?.stopped, true);
      assert.ok(stopped && !fake.running.includes(stopped.id), 'no longer being made');
    } finally {
      fake.outcome = 'complete';
      fake.slowCancel = false;
    }
  });

  it('refuses at start extra_body fields vLLM-Omni would ignore', () => {
    assert.throws(() => engine({ extra_body: { sample_solver: 'unipc' } }), /would ignore sample_solver/);
    assert.throws(() => engine({ extra_body: { seed: 1 } }), /the engine sets seed/);
  });

  it('check() fails when the configured model is not the served model name', async () => {
    await engine().check(AbortSignal.timeout(10_000));
    await assert.rejects(
      engine({ model: 'wan2.2' }).check(AbortSignal.timeout(10_000)),
      /vLLM-Omni serves "Wan-AI\/Wan2.2-T2V-A14B-Diffusers" and refuses any other model name/,
    );
  });
});

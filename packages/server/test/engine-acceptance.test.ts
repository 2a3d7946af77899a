/**
 * When each engine says its upstream has taken the job (`RenderContext.onAccepted`), against the strict fakes
 * (a real videogen for `relay`): once, before any progress and before the render resolves; and never for a
 * submission the upstream does not take (503 to every submit, a closed port, a command that does not exist),
 * which is what lets the runner move such a task on to the next engine of its route. And, for every remote
 * engine, that the handle it accepts with is enough for another run to resume the job: stopped right after its
 * acceptance with the job handed over, then rendered again from the handle, it is submitted once in all and
 * the second render delivers the video.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type TaskErrorCode, TaskFailure } from '../src/domain/errors.js';
import type { UpstreamHandle } from '../src/domain/upstream-job.js';
import { ArkEngine } from '../src/engines/ark/ark-engine.js';
import { ComfyUiEngine } from '../src/engines/comfyui/comfyui-engine.js';
import { ExecEngine } from '../src/engines/exec/exec-engine.js';
import type { ExecOptions } from '../src/engines/exec/exec-options.js';
import { FalEngine } from '../src/engines/fal/fal-engine.js';
import { GeminiEngine } from '../src/engines/gemini/gemini-engine.js';
import { LocalEngine } from '../src/engines/local/local-engine.js';
import { OpenAiEngine } from '../src/engines/openai/openai-engine.js';
import type { OpenAiOptions } from '../src/engines/openai/openai-options.js';
import { RelayEngine } from '../src/engines/relay/relay-engine.js';
import { ReplicateEngine } from '../src/engines/replicate/replicate-engine.js';
import { RunwayEngine } from '../src/engines/runway/runway-engine.js';
import { ffmpegPath, ffprobePath } from '../src/media/ffmpeg-paths.js';
import type { Engine, RenderContext } from '../src/ports/engine.js';
import { FakeArkServer } from './fakes/ark-server.js';
import { FakeComfyUi } from './fakes/comfyui-server.js';
import { FakeFalServer, SEEDANCE_T2V } from './fakes/fal-server.js';
import { FakeGeminiServer } from './fakes/gemini-server.js';
import { FakeReplicate } from './fakes/replicate-server.js';
import { FakeRunwayServer } from './fakes/runway-server.js';
import { FakeVideoServer, type VideoServerKind } from './fakes/video-servers.js';
import { Api } from './helpers/api.js';
import { writeTestImage } from './helpers/media-fixtures.js';
import { assertContractVideo, type JobOptions, makeJob, renderContext } from './helpers/render-jobs.js';
import { startTestService, type TestService } from './helpers/test-service.js';

const FIXTURES = fileURLToPath(new URL('../../test/fixtures/', import.meta.url));
const WAN_FAKE = fileURLToPath(new URL('../../test/fakes/wan-generate.mjs', import.meta.url));
const KEY = 'sk-acceptance-7Yq2Lm9Xc4Vb8Nz1Rt6Pw3Hs';
const FAL_KEY = '6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b:8e3f1a9c5d7b2e4f6a8c0b1d3e5f7a9c';
/** The deadline of a render whose submission is never taken: a few retries, then it gives up. */
const SHORT_DEADLINE_MS = 2000;
/** More 503s than a render retries within SHORT_DEADLINE_MS. */
const EVERY_TIME = 50;

let dir: string;
const closers: (() => Promise<unknown>)[] = [];

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-engine-acceptance-'));
});

after(async () => {
  for (const close of closers.reverse()) await close();
  await rm(dir, { recursive: true, force: true });
});

function job(options: JobOptions = {}) {
  return makeJob(dir, {
    taskPrefix: 'task-acceptance',
    prompt: 'a paper boat on a pond',
    seed: 7,
    ...options,
  });
}

/** A render context that records, in order, each onAccepted and onProgress call. */
function recorder(deadlineMs?: number): { events: string[]; context: RenderContext } {
  const events: string[] = [];
  const context: RenderContext = {
    ...renderContext(undefined, { deadlineMs, onProgress: () => events.push('progress') }),
    onAccepted: () => {
      events.push('accepted');
    },
  };
  return { events, context };
}

function accepted(events: readonly string[]): number {
  return events.filter((event) => event === 'accepted').length;
}

/** Renders to the end: onAccepted was called once, before any progress and before the render resolved. */
async function assertAcceptedOnce(render: (context: RenderContext) => Promise<void>): Promise<void> {
  const { events, context } = recorder();
  await render(context);
  events.push('resolved');
  const shown = events.join(' ');
  assert.equal(accepted(events), 1, `onAccepted once: ${shown}`);
  assert.equal(events[0], 'accepted', `onAccepted before any progress: ${shown}`);
  assert.ok(events.includes('progress'), `progress was reported: ${shown}`);
}

/** The render fails with `code`, and onAccepted was never called. */
async function assertNeverAccepted(
  render: (context: RenderContext) => Promise<void>,
  code: TaskErrorCode,
): Promise<TaskFailure> {
  const { events, context } = recorder(SHORT_DEADLINE_MS);
  const error = await render(context).then(
    () => assert.fail('expected the render to fail'),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof TaskFailure, `a TaskFailure, got ${String(error)}`);
  assert.equal(error.code, code, error.message);
  assert.equal(accepted(events), 0, `onAccepted never called: ${events.join(' ')}`);
  return error;
}

/**
 * Renders once, stopped as soon as the job is accepted (a deploy: the job handed over), then again from the
 * handle it was accepted with: `made` (jobs the upstream made) rises by one in all, and the second render
 * delivers the video without accepting anything.
 */
async function assertResumes(
  render: (context: RenderContext) => Promise<RenderJobLike>,
  made: () => number | Promise<number>,
): Promise<void> {
  const before = await made();
  const deploy = new AbortController();
  let handle: UpstreamHandle | undefined;
  const first: RenderContext = {
    ...renderContext(deploy.signal),
    onAccepted: (accepted) => {
      handle = accepted;
      deploy.abort(new Error('shutdown'));
    },
    handsOver: () => true,
  };
  await assert.rejects(render(first));
  assert.ok(handle, 'accepted with a handle');
  assert.equal(await made(), before + 1, 'submitted');
  let acceptedAgain = false;
  const resumed = await render({
    ...renderContext(),
    resume: handle,
    handsOver: () => true,
    onAccepted: () => {
      acceptedAgain = true;
    },
  });
  await assertContractVideo(resumed);
  assert.equal(await made(), before + 1, 'not submitted again');
  assert.equal(acceptedAgain, false, 'a resumed job is not accepted again');
}

type RenderJobLike = Parameters<typeof assertContractVideo>[0];

/** Renders a new job of `options` on `engine` and resolves with the job. */
function rendering(engine: Engine, options: JobOptions = {}) {
  return async (context: RenderContext): Promise<RenderJobLike> => {
    const made = job(options);
    await engine.render(made, context);
    return made;
  };
}

/** A loopback port nothing listens on: listened on, then closed. */
async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  assert.ok(address && typeof address === 'object');
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${address.port}`;
}

function cacheDir(): string {
  return join(dir, 'cache');
}

describe('local engine', () => {
  it('is accepted once, when rendering begins', async () => {
    const engine = new LocalEngine();
    const localJob = job({ model: 'videogen-2.0-fast-text-to-video', duration: 2 });
    await assertAcceptedOnce((context) => engine.render(localJob, context));
  });
});

describe('exec engine', () => {
  async function wan(command: ExecOptions['command']): Promise<ExecEngine> {
    const cwd = join(dir, 'Wan2.2');
    await mkdir(join(cwd, 'Wan2.2-T2V-A14B'), { recursive: true });
    return new ExecEngine(
      'wan-t2v',
      {
        type: 'exec',
        cwd,
        command,
        env: { WAN_FAKE_FFMPEG: ffmpegPath(), WAN_FAKE_FFPROBE: ffprobePath(), WAN_FAKE_CACHE: cacheDir() },
        sizes: ['1280x720', '720x1280', '832x480', '480x832'],
        fps: 16,
        frame_step: 4,
      },
      { baseDir: dir },
    );
  }

  it('is accepted once the command is running', async () => {
    const engine = await wan([
      process.execPath,
      WAN_FAKE,
      ...['--task', 't2v-A14B', '--ckpt_dir', './Wan2.2-T2V-A14B', '--size', '{size_star}'],
      ...[
        '--frame_num',
        '{frames}',
        '--base_seed',
        '{seed}',
        '--prompt',
        '{prompt}',
        '--save_file',
        '{output}',
      ],
    ]);
    const wanJob = job({ duration: 2 });
    await assertAcceptedOnce((context) => engine.render(wanJob, context));
  });

  it('is never accepted when the command cannot be started', async () => {
    const missing = join(dir, 'missing', 'generate.py');
    const engine = await wan([missing, '--prompt', '{prompt}', '--save_file', '{output}']);
    const failure = await assertNeverAccepted((context) => engine.render(job(), context), 'upstream_error');
    assert.match(failure.message, /could not start/);
  });
});

// The servers' fakes are independent of each other: they run side by side, each one's tests in turn (a
// refusal waits out SHORT_DEADLINE_MS).
describe('openai engine', { concurrency: true }, () => {
  const settings: Record<VideoServerKind, (server: FakeVideoServer) => OpenAiOptions> = {
    openai: (server) => ({ type: 'openai', base_url: server.url, api_key: KEY, model: 'sora-2' }),
    sglang: (server) => ({
      type: 'openai',
      server: 'sglang',
      base_url: server.url,
      model: server.servedModel,
      sizes: ['1280x720', '720x1280', '832x480', '480x832'],
      fps: 16,
      frame_step: 4,
    }),
    'vllm-omni': (server) => ({
      type: 'openai',
      server: 'vllm-omni',
      base_url: server.url,
      api_key: KEY,
      model: server.servedModel,
      fps: 16,
      frame_step: 4,
    }),
  };

  for (const kind of ['openai', 'sglang', 'vllm-omni'] as const) {
    describe(`server: ${kind}`, { concurrency: false }, () => {
      let server: FakeVideoServer;
      let engine: OpenAiEngine;

      before(async () => {
        server = await FakeVideoServer.start({
          kind,
          cacheDir: cacheDir(),
          apiKey: kind === 'sglang' ? undefined : KEY,
          picture: { colour: '0x2060a0' },
        });
        closers.push(() => server.close());
        engine = new OpenAiEngine(
          kind,
          { ...settings[kind](server), poll_interval_ms: 10 },
          { baseDir: dir },
        );
      });

      it('is accepted once POST /v1/videos has answered with a video', async () => {
        await assertAcceptedOnce((context) => engine.render(job(), context));
        assert.equal(server.creates.length, 1);
      });

      it('resumes a video from its id alone, created once', async () => {
        await assertResumes(rendering(engine), () => server.creates.length);
      });

      it('is never accepted while every POST /v1/videos is answered 503', async () => {
        const creates = server.creates.length;
        server.busyAnswers.push(...Array.from({ length: EVERY_TIME }, () => ({ status: 503 })));
        try {
          await assertNeverAccepted((context) => engine.render(job(), context), 'upstream_unavailable');
        } finally {
          server.busyAnswers.length = 0;
        }
        assert.ok(server.requests.some((r) => r.path === '/v1/videos' && r.status === 503));
        assert.equal(server.creates.length, creates, 'no video was made');
      });
    });
  }
});

describe('comfyui engine', () => {
  let comfy: FakeComfyUi;

  before(async () => {
    comfy = await FakeComfyUi.start();
    closers.push(() => comfy.close());
  });

  function engine(baseUrl: string, workflow = 'comfyui-text-workflow.json'): ComfyUiEngine {
    return new ComfyUiEngine(
      'ltx',
      { type: 'comfyui', base_url: baseUrl, workflow, poll_interval_ms: 20 },
      { baseDir: FIXTURES },
    );
  }

  it('is accepted once POST /prompt has answered with a prompt_id', async () => {
    await assertAcceptedOnce((context) => engine(comfy.baseUrl).render(job({ duration: 2 }), context));
  });

  it('resumes the prompt from its id alone, queued once', async () => {
    await assertResumes(rendering(engine(comfy.baseUrl), { duration: 2 }), () => comfy.prompts.length);
  });

  it('is not accepted for the image uploads, only once the prompt is queued', async () => {
    const red = join(dir, 'red.png');
    const blue = join(dir, 'blue.jpg');
    await writeTestImage(red, { width: 320, height: 180, colour: [220, 30, 40] });
    await writeTestImage(blue, { width: 320, height: 180, colour: [30, 60, 220] });
    await comfy.reset();
    const release = comfy.holdPromptRequests();
    const received = comfy.waitFor('prompt-received');
    const { events, context } = recorder();
    const imageJob = job({ model: 'videogen-2.0-image-to-video', duration: 2, images: [red, blue] });
    const rendering = engine(comfy.baseUrl, 'comfyui-image-workflow.json').render(imageJob, context);
    try {
      await received;
      assert.equal(comfy.uploads.size, 2, 'both images were uploaded before the prompt was sent');
      assert.equal(accepted(events), 0, 'not accepted before ComfyUI answers POST /prompt');
    } finally {
      release();
    }
    await rendering;
    assert.equal(accepted(events), 1);
    assert.equal(events[0], 'accepted');
  });

  it('is never accepted when ComfyUI is not listening', async () => {
    const url = await closedPortUrl();
    await assertNeverAccepted((context) => engine(url).render(job(), context), 'upstream_unavailable');
  });
});

describe('relay engine', () => {
  let upstream: TestService;
  let key: string;

  before(async () => {
    upstream = await startTestService({ VIDEOGEN_WORKER_CONCURRENCY: '1' });
    closers.push(() => upstream.close());
    key = (await upstream.newKey()).key;
  });

  function engine(baseUrl: string): RelayEngine {
    return new RelayEngine(
      'upstream',
      { type: 'relay', base_url: baseUrl, api_key: key, poll_interval_ms: 50 },
      { baseDir: dir },
    );
  }

  it('is accepted once the other videogen has answered with its task', async () => {
    const relayJob = job({ model: 'videogen-2.0-fast-text-to-video' });
    await assertAcceptedOnce((context) => engine(upstream.url).render(relayJob, context));
  });

  it('resumes the other videogen task from its id alone, created once', async () => {
    const tasks = async () => {
      const listed = await new Api(upstream.url, key).request<{ data: unknown[] }>(
        'GET',
        '/v1/tasks?limit=100',
      );
      return listed.body.data.length;
    };
    const relayJob = { model: 'videogen-2.0-fast-text-to-video' } as const;
    await assertResumes(rendering(engine(upstream.url), relayJob), tasks);
  });

  it('is never accepted when the other videogen is not listening', async () => {
    const url = await closedPortUrl();
    const relayJob = job({ model: 'videogen-2.0-fast-text-to-video' });
    await assertNeverAccepted((context) => engine(url).render(relayJob, context), 'upstream_unavailable');
  });
});

// As for the openai servers: the providers side by side, each one's tests in turn.
describe('hosted engines', { concurrency: true }, () => {
  /** Each hosted engine against its fake: the engine, and a way to make the fake answer 503 to every submit. */
  interface Hosted {
    readonly engine: Engine;
    readonly job: JobOptions;
    refuseSubmits(): void;
    /** Clears what refuseSubmits left. */
    reset(): void;
    /** Submits the fake answered 503, and tasks it made. */
    submits(): { refused: number; made: number };
  }

  const hosted: Record<string, () => Promise<Hosted>> = {
    ark: async () => {
      const server = await FakeArkServer.start({ apiKey: KEY, cacheDir: cacheDir() });
      closers.push(() => server.close());
      const tasks = '/api/v3/contents/generations/tasks';
      return {
        engine: new ArkEngine(
          'seedance',
          {
            type: 'ark',
            base_url: server.baseUrl,
            api_key: KEY,
            model: 'dreamina-seedance-2-0-260128',
            poll_interval_ms: 5,
          },
          { baseDir: dir },
        ),
        job: { duration: 4 },
        refuseSubmits: () =>
          server.busyAnswers.push(
            ...Array.from({ length: EVERY_TIME }, () => ({ status: 503, code: 'ServiceUnavailable' })),
          ),
        reset: () => {
          server.busyAnswers.length = 0;
        },
        submits: () => ({
          refused: server.requests.filter((r) => r.method === 'POST' && r.path === tasks && r.status === 503)
            .length,
          made: server.creates.length,
        }),
      };
    },
    gemini: async () => {
      const server = await FakeGeminiServer.start({ apiKey: KEY, cacheDir: cacheDir() });
      closers.push(() => server.close());
      return {
        engine: new GeminiEngine(
          'veo',
          {
            type: 'gemini',
            base_url: server.url,
            api_key: KEY,
            model: 'veo-3.1-generate-preview',
            poll_interval_ms: 5,
          },
          { baseDir: dir },
        ),
        job: { duration: 4 },
        refuseSubmits: () =>
          server.failures.push(
            ...Array.from({ length: EVERY_TIME }, () => ({ route: 'submit' as const, status: 503 as const })),
          ),
        reset: () => {
          server.failures.length = 0;
        },
        submits: () => ({
          refused: server.requestsTo('POST', '/v1beta/models/').filter((r) => r.status === 503).length,
          made: server.submits.length,
        }),
      };
    },
    runway: async () => {
      const server = await FakeRunwayServer.start({ apiKey: KEY, cacheDir: cacheDir() });
      closers.push(() => server.close());
      return {
        engine: new RunwayEngine(
          'gen',
          { type: 'runway', base_url: server.url, api_key: KEY, model: 'gen4.5', poll_interval_ms: 5 },
          { baseDir: dir },
        ),
        job: { quality: '720p', duration: 5 },
        refuseSubmits: () =>
          server.busyCreates.push(...Array.from({ length: EVERY_TIME }, () => ({ status: 503 }))),
        reset: () => {
          server.busyCreates.length = 0;
        },
        submits: () => ({
          refused: server.requests.filter((r) => r.method === 'POST' && r.status === 503).length,
          made: server.creates.length,
        }),
      };
    },
    fal: async () => {
      const server = await FakeFalServer.start({ apiKey: FAL_KEY, cacheDir: cacheDir() });
      closers.push(() => server.close());
      return {
        engine: new FalEngine(
          'seedance',
          {
            type: 'fal',
            base_url: server.url,
            api_key: FAL_KEY,
            model: SEEDANCE_T2V,
            input: {
              prompt: '{{prompt}}',
              duration: '{{duration|text}}',
              resolution: '{{resolution}}',
              aspect_ratio: '{{aspect_ratio}}',
              seed: '{{seed}}',
            },
            durations: [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
            resolutions: ['480p', '720p', '1080p'],
            aspect_ratios: ['21:9', '16:9', '4:3', '1:1', '3:4', '9:16'],
            poll_interval_ms: 10,
          },
          { baseDir: dir },
        ),
        job: { duration: 4 },
        refuseSubmits: () =>
          server.busyAnswers.push(
            ...Array.from({ length: EVERY_TIME }, () => ({ route: 'submit' as const, status: 503 })),
          ),
        reset: () => {
          server.busyAnswers.length = 0;
        },
        submits: () => ({
          refused: server.requests.filter((r) => r.method === 'POST' && r.status === 503).length,
          made: server.submits.length,
        }),
      };
    },
    replicate: async () => {
      const server = await FakeReplicate.start({ apiKey: KEY, cacheDir: cacheDir() });
      closers.push(() => server.close());
      return {
        engine: new ReplicateEngine(
          'seedance',
          {
            type: 'replicate',
            base_url: server.url,
            api_key: KEY,
            model: 'bytedance/seedance-1-pro',
            input: {
              prompt: '{{prompt}}',
              duration: '{{duration}}',
              resolution: '{{resolution}}',
              aspect_ratio: '{{aspect_ratio}}',
              fps: 24,
              seed: '{{seed}}',
            },
            durations: [3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
            resolutions: ['480p', '720p', '1080p'],
            aspect_ratios: ['16:9', '4:3', '1:1', '3:4', '9:16', '21:9', '9:21'],
            poll_interval_ms: 5,
          },
          { baseDir: dir },
        ),
        job: { duration: 4 },
        // Replicate does not send a create again after a 5xx (the prediction may exist): one is enough.
        refuseSubmits: () => server.interruptions.push({ route: 'create', status: 503 }),
        reset: () => {
          server.interruptions.length = 0;
        },
        submits: () => ({
          refused: server.requests.filter((r) => r.route === 'create' && r.status === 503).length,
          made: server.creates.length,
        }),
      };
    },
  };

  for (const [type, start] of Object.entries(hosted)) {
    describe(type, { concurrency: false }, () => {
      let provider: Hosted;

      before(async () => {
        provider = await start();
      });

      it('is accepted once the provider has answered the submit with its id', async () => {
        const hostedJob = job(provider.job);
        await assertAcceptedOnce((context) => provider.engine.render(hostedJob, context));
        assert.equal(provider.submits().made, 1);
      });

      it('resumes the job from its handle alone, submitted once', async () => {
        await assertResumes(rendering(provider.engine, provider.job), () => provider.submits().made);
      });

      it('is never accepted while every submit is answered 503', async () => {
        const made = provider.submits().made;
        provider.refuseSubmits();
        try {
          const hostedJob = job(provider.job);
          await assertNeverAccepted(
            (context) => provider.engine.render(hostedJob, context),
            'upstream_unavailable',
          );
        } finally {
          provider.reset();
        }
        const submits = provider.submits();
        assert.ok(submits.refused >= 1, 'the submit was answered 503');
        assert.equal(submits.made, made, 'no task was made upstream');
      });
    });
  }
});

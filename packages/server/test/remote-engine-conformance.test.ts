/**
 * One conformance suite for every engine whose work is a job on another server (hosted/remote-job-engine.ts),
 * each against the strict fake of its upstream (a real videogen for `relay`, the fake ComfyUI for `comfyui`), reached through a scripted proxy
 * (helpers/scripted-proxy.ts) that records what the engine sends and answers what a test scripts (a 429, a 503,
 * an error page quoting the request):
 *   - acceptance: `onAccepted` once, with a handle, before any progress; the video delivered conforms;
 *   - a restart: stopped right after acceptance with the job handed over, nothing is cancelled upstream, and a
 *     render from the handle alone delivers the video with the job submitted once in all;
 *   - a client's cancel (the job not handed over) reaches the upstream, where it can stop a job at all;
 *   - a poll answered 429 with `Retry-After` is asked again no sooner than it says, and the job completes;
 *   - the key never appears in a message, though the upstream's refusal quotes the request's headers;
 *   - the time limit: a job still running fails with `timeout` and is cancelled upstream (where it can be);
 *   - a submission answered 503 every time is never accepted and ends `upstream_unavailable` (so the runner may
 *     move the task on to the next engine of its route).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { TaskFailure } from '../src/domain/errors.js';
import type { UpstreamHandle } from '../src/domain/upstream-job.js';
import { ArkEngine } from '../src/engines/ark/ark-engine.js';
import { ComfyUiEngine } from '../src/engines/comfyui/comfyui-engine.js';
import { FalEngine } from '../src/engines/fal/fal-engine.js';
import { GeminiEngine } from '../src/engines/gemini/gemini-engine.js';
import { OpenAiEngine } from '../src/engines/openai/openai-engine.js';
import type { OpenAiOptions } from '../src/engines/openai/openai-options.js';
import { RelayEngine } from '../src/engines/relay/relay-engine.js';
import { ReplicateEngine } from '../src/engines/replicate/replicate-engine.js';
import { RunwayEngine } from '../src/engines/runway/runway-engine.js';
import type { Engine } from '../src/ports/engine.js';
import { FakeArkServer } from './fakes/ark-server.js';
import { FakeComfyUi } from './fakes/comfyui-server.js';
import { FakeFalServer, SEEDANCE_T2V } from './fakes/fal-server.js';
import { FakeGeminiServer } from './fakes/gemini-server.js';
import { FakeReplicate } from './fakes/replicate-server.js';
import { FakeRunwayServer } from './fakes/runway-server.js';
import { FakeVideoServer, type VideoServerKind } from './fakes/video-servers.js';
import { assertContractVideo, type JobOptions, makeJob, renderContext } from './helpers/render-jobs.js';
import { ScriptedProxy } from './helpers/scripted-proxy.js';
import { startTestService } from './helpers/test-service.js';

const FIXTURES = fileURLToPath(new URL('../../test/fixtures/', import.meta.url));
const KEY = 'sk-conformance-7Yq2Lm9Xc4Vb8Nz1Rt6Pw3Hs';
const FAL_KEY = '6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b:8e3f1a9c5d7b2e4f6a8c0b1d3e5f7a9c';
/** The time limit of a render whose job never ends: a few polls, then `timeout`. */
const SHORT_DEADLINE_MS = 1500;
const RETRY_AFTER_SECONDS = 1;

type Matcher = (method: string, path: string) => boolean;

/** An engine against its fake, behind the proxy, and how to read and steer what the fake does. */
interface Harness {
  readonly engine: Engine;
  readonly proxy: ScriptedProxy;
  readonly job: JobOptions;
  /** The secret the engine sends, which no message may show; undefined for an upstream without one. */
  readonly key: string | undefined;
  readonly isSubmit: Matcher;
  readonly isPoll: Matcher;
  readonly isCancel: Matcher;
  /**
   * A 429's body, where the upstream says how long to wait in it (the Gemini API: `RetryInfo`, and no
   * `Retry-After` header); a plain error body with the header otherwise.
   */
  rateLimited?(seconds: number): string;
  /** Whether the engine can stop a job upstream (Gemini has no call for it; OpenAI refuses to delete a video it is making). */
  readonly cancels: boolean;
  /** From now on, the upstream's jobs never end (until `finish`). */
  neverFinish(): void;
  finish(): void;
}

let dir: string;
const closers: (() => Promise<unknown>)[] = [];

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-remote-conformance-'));
});

after(async () => {
  for (const close of closers.reverse()) await close();
  await rm(dir, { recursive: true, force: true });
});

const cacheDir = () => join(dir, 'cache');

async function proxyTo(url: string): Promise<ScriptedProxy> {
  const proxy = await ScriptedProxy.start(new URL(url).origin);
  closers.push(() => proxy.close());
  return proxy;
}

const path =
  (method: string, pattern: RegExp): Matcher =>
  (m, p) =>
    m === method && pattern.test(p.split('?')[0] ?? '');

/** An error page that quotes the request's headers back, as a debugging proxy or a careless server does. */
function echoHeaders({ headers }: { readonly headers: IncomingHttpHeaders }): string {
  const quoted = JSON.stringify(headers);
  return JSON.stringify({
    error: { code: 'InvalidParameter', message: `bad request: ${quoted}`, status: 'INVALID_ARGUMENT' },
  });
}

const harnesses: Record<string, () => Promise<Harness>> = {
  ark: async () => {
    const server = await FakeArkServer.start({ apiKey: KEY, cacheDir: cacheDir() });
    closers.push(() => server.close());
    const proxy = await proxyTo(server.url);
    const tasks = '/api/v3/contents/generations/tasks';
    return {
      engine: new ArkEngine(
        'seedance',
        {
          type: 'ark',
          base_url: `${proxy.url}/api/v3`,
          api_key: KEY,
          model: 'dreamina-seedance-2-0-260128',
          poll_interval_ms: 5,
        },
        { baseDir: dir },
      ),
      proxy,
      job: { duration: 4 },
      key: KEY,
      isSubmit: path('POST', new RegExp(`^${tasks}$`)),
      isPoll: path('GET', new RegExp(`^${tasks}/[^/]+$`)),
      isCancel: path('DELETE', new RegExp(`^${tasks}/[^/]+$`)),
      cancels: true,
      neverFinish: () => {
        server.outcome = 'never-finish';
      },
      finish: () => {
        server.outcome = 'succeed';
      },
    };
  },
  gemini: async () => {
    const server = await FakeGeminiServer.start({ apiKey: KEY, cacheDir: cacheDir() });
    closers.push(() => server.close());
    const proxy = await proxyTo(server.url);
    server.urlOrigin = proxy.url;
    let never = false;
    const harness: Harness = {
      engine: new GeminiEngine(
        'veo',
        {
          type: 'gemini',
          base_url: proxy.url,
          api_key: KEY,
          model: 'veo-3.1-generate-preview',
          poll_interval_ms: 5,
        },
        { baseDir: dir },
      ),
      proxy,
      job: { duration: 4 },
      key: KEY,
      isSubmit: path('POST', /:predictLongRunning$/),
      isPoll: path('GET', /\/operations\//),
      isCancel: path('POST', /:cancel$/),
      rateLimited: (seconds) =>
        JSON.stringify({
          error: {
            code: 429,
            message: 'Resource has been exhausted (e.g. check quota).',
            status: 'RESOURCE_EXHAUSTED',
            details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${seconds}s` }],
          },
        }),
      cancels: false,
      neverFinish: () => {
        never = true;
        server.outcomes.push(...Array.from({ length: 20 }, () => ({ kind: 'never-finish' as const })));
      },
      finish: () => {
        if (never) server.outcomes.length = 0;
        never = false;
      },
    };
    return harness;
  },
  runway: async () => {
    const server = await FakeRunwayServer.start({ apiKey: KEY, cacheDir: cacheDir() });
    closers.push(() => server.close());
    const proxy = await proxyTo(server.url);
    return {
      engine: new RunwayEngine(
        'gen',
        { type: 'runway', base_url: proxy.url, api_key: KEY, model: 'gen4.5', poll_interval_ms: 5 },
        { baseDir: dir },
      ),
      proxy,
      job: { quality: '720p', duration: 5 },
      key: KEY,
      isSubmit: path('POST', /^\/v1\/(text|image)_to_video$/),
      isPoll: path('GET', /^\/v1\/tasks\/[^/]+$/),
      isCancel: path('DELETE', /^\/v1\/tasks\/[^/]+$/),
      cancels: true,
      neverFinish: () => {
        server.outcome = { kind: 'never-finish' };
      },
      finish: () => {
        server.outcome = { kind: 'succeed' };
      },
    };
  },
  fal: async () => {
    const server = await FakeFalServer.start({ apiKey: FAL_KEY, cacheDir: cacheDir() });
    closers.push(() => server.close());
    const proxy = await proxyTo(server.url);
    server.urlOrigin = proxy.url;
    return {
      engine: new FalEngine(
        'seedance',
        {
          type: 'fal',
          base_url: proxy.url,
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
      proxy,
      job: { duration: 4 },
      key: FAL_KEY,
      isSubmit: (m, p) => m === 'POST' && !p.includes('/requests/'),
      isPoll: path('GET', /\/requests\/[^/]+\/status$/),
      isCancel: path('PUT', /\/requests\/[^/]+\/cancel$/),
      cancels: true,
      neverFinish: () => {
        server.outcome = 'never-finish';
      },
      finish: () => {
        server.outcome = 'complete';
      },
    };
  },
  replicate: async () => {
    const server = await FakeReplicate.start({ apiKey: KEY, cacheDir: cacheDir() });
    closers.push(() => server.close());
    const proxy = await proxyTo(server.url);
    return {
      engine: new ReplicateEngine(
        'seedance',
        {
          type: 'replicate',
          base_url: proxy.url,
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
      proxy,
      job: { duration: 4 },
      key: KEY,
      isSubmit: path('POST', /\/predictions$/),
      isPoll: path('GET', /^\/v1\/predictions\/[^/]+$/),
      isCancel: path('POST', /^\/v1\/predictions\/[^/]+\/cancel$/),
      cancels: true,
      neverFinish: () => {
        server.outcome = 'never-finish';
      },
      finish: () => {
        server.outcome = 'succeed';
      },
    };
  },
  relay: async () => {
    const upstream = await startTestService({ VIDEOGEN_WORKER_CONCURRENCY: '1' });
    closers.push(() => upstream.close());
    const { key } = await upstream.newKey();
    const proxy = await proxyTo(upstream.url);
    const isPoll = path('GET', /^\/v1\/tasks\/[^/]+$/);
    // The other videogen renders with its built-in engine, which always finishes: a job that never ends is the
    // proxy's answer to each poll, a task still processing.
    const processing = (request: { readonly path: string }) =>
      JSON.stringify({
        id: decodeURIComponent(request.path.split('?')[0]?.split('/').pop() ?? ''),
        object: 'video.generation.task',
        status: 'processing',
        progress: 10,
      });
    return {
      engine: new RelayEngine(
        'upstream',
        { type: 'relay', base_url: proxy.url, api_key: key, poll_interval_ms: 50 },
        { baseDir: dir },
      ),
      proxy,
      job: { model: 'videogen-2.0-fast-text-to-video' },
      key,
      isSubmit: path('POST', /^\/v1\/videos\/generations$/),
      isPoll,
      isCancel: path('POST', /^\/v1\/tasks\/[^/]+\/cancel$/),
      cancels: true,
      neverFinish: () =>
        proxy.script({ matches: isPoll, status: 200, body: processing, times: Number.POSITIVE_INFINITY }),
      finish: () => proxy.unscript(),
    };
  },
};

harnesses.comfyui = async () => {
  const server = await FakeComfyUi.start();
  closers.push(() => server.close());
  const proxy = await proxyTo(server.baseUrl);
  return {
    // Through the proxy, which passes no websocket upgrade: the engine follows the prompt by its polls alone.
    engine: new ComfyUiEngine(
      'ltx',
      {
        type: 'comfyui',
        base_url: proxy.url,
        api_key: KEY,
        workflow: 'comfyui-text-workflow.json',
        poll_interval_ms: 20,
      },
      { baseDir: FIXTURES },
    ),
    proxy,
    job: { duration: 2 },
    key: KEY,
    isSubmit: path('POST', /^\/prompt$/),
    isPoll: path('GET', /^\/history\/[^/]+$/),
    isCancel: path('POST', /^\/interrupt$/),
    cancels: true,
    neverFinish: () => {
      // Its sampler's step never ends until the prompt is interrupted.
      server.gpu.stallNode = { node: '6' };
    },
    finish: () => {
      server.gpu = {};
    },
  };
};

const openAiSettings: Record<VideoServerKind, (url: string, server: FakeVideoServer) => OpenAiOptions> = {
  openai: (url) => ({ type: 'openai', base_url: url, api_key: KEY, model: 'sora-2' }),
  sglang: (url, server) => ({
    type: 'openai',
    server: 'sglang',
    base_url: url,
    model: server.servedModel,
    sizes: ['1280x720', '720x1280', '832x480', '480x832'],
    fps: 16,
    frame_step: 4,
  }),
  'vllm-omni': (url, server) => ({
    type: 'openai',
    server: 'vllm-omni',
    base_url: url,
    api_key: KEY,
    model: server.servedModel,
    fps: 16,
    frame_step: 4,
  }),
};

for (const kind of ['openai', 'sglang', 'vllm-omni'] as const) {
  harnesses[`openai (${kind})`] = async () => {
    const withKey = kind !== 'sglang';
    const server = await FakeVideoServer.start({
      kind,
      cacheDir: cacheDir(),
      apiKey: withKey ? KEY : undefined,
      picture: { colour: '0x2060a0' },
    });
    closers.push(() => server.close());
    const proxy = await proxyTo(server.url);
    return {
      engine: new OpenAiEngine(
        kind,
        { ...openAiSettings[kind](proxy.url, server), poll_interval_ms: 10 },
        { baseDir: dir },
      ),
      proxy,
      job: {},
      key: withKey ? KEY : undefined,
      isSubmit: path('POST', /^\/v1\/videos$/),
      isPoll: path('GET', /^\/v1\/videos\/[^/]+$/),
      isCancel: path('DELETE', /^\/v1\/videos\/[^/]+$/),
      cancels: kind !== 'openai',
      neverFinish: () => {
        server.outcome = 'never-finish';
      },
      finish: () => {
        server.outcome = 'complete';
      },
    };
  };
}

let jobs = 0;
function job(options: JobOptions) {
  jobs += 1;
  // A seed of its own: an upstream that caches by input (ComfyUI) runs each job anew.
  return makeJob(dir, {
    taskPrefix: `task-conformance-${jobs}`,
    prompt: 'a paper boat on a pond',
    seed: 7 + jobs,
    ...options,
  });
}

/** Made upstream: submissions the upstream answered with success. */
function made(harness: Harness): number {
  return harness.proxy.matching(harness.isSubmit).filter((r) => r.status < 300).length;
}

function cancelsSent(harness: Harness): number {
  return harness.proxy.matching(harness.isCancel).length;
}

/** Waits for the engine's first poll of its job (a request the proxy records; nothing is waited out). */
async function firstPoll(harness: Harness, since: number): Promise<void> {
  for (let i = 0; i < 6000; i++) {
    if (harness.proxy.matching(harness.isPoll).length > since) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.fail('the engine never polled its job');
}

for (const [name, start] of Object.entries(harnesses)) {
  describe(`remote engine: ${name}`, () => {
    let harness: Harness;

    before(async () => {
      harness = await start();
    });

    it('is accepted once, with a handle, before any progress, and delivers a conforming video', async () => {
      const events: string[] = [];
      let handle: UpstreamHandle | undefined;
      const rendered = job(harness.job);
      await harness.engine.render(rendered, {
        ...renderContext(undefined, { onProgress: () => events.push('progress') }),
        onAccepted: (accepted) => {
          handle = accepted;
          events.push('accepted');
        },
      });
      assert.equal(events.filter((event) => event === 'accepted').length, 1, events.join(' '));
      assert.equal(events[0], 'accepted', events.join(' '));
      assert.ok(handle && handle.id !== '', 'accepted with the upstream id');
      await assertContractVideo(rendered);
    });

    it('resumes from the handle alone after a stop that hands the job over: one submission, nothing cancelled', async () => {
      const before = made(harness);
      const cancelled = cancelsSent(harness);
      const deploy = new AbortController();
      let handle: UpstreamHandle | undefined;
      const stopped = job(harness.job);
      await assert.rejects(
        harness.engine.render(stopped, {
          ...renderContext(deploy.signal),
          onAccepted: (accepted) => {
            handle = accepted;
            deploy.abort(new Error('shutdown'));
          },
          handsOver: () => true,
        }),
      );
      assert.ok(handle, 'accepted with a handle');
      let acceptedAgain = false;
      const resumed = job(harness.job);
      await harness.engine.render(resumed, {
        ...renderContext(),
        resume: handle,
        handsOver: () => true,
        onAccepted: () => {
          acceptedAgain = true;
        },
      });
      await assertContractVideo(resumed);
      assert.equal(made(harness), before + 1, 'submitted once in all');
      assert.equal(acceptedAgain, false, 'a resumed job is not accepted again');
      assert.equal(cancelsSent(harness), cancelled, 'nothing cancelled upstream');
    });

    it("sends a client's cancel upstream, where the upstream can stop a job", async () => {
      harness.neverFinish();
      try {
        const cancelled = cancelsSent(harness);
        const polls = harness.proxy.matching(harness.isPoll).length;
        const controller = new AbortController();
        const reason = new Error('cancelled by the client');
        const rendering = harness.engine.render(job(harness.job), renderContext(controller.signal));
        await firstPoll(harness, polls);
        controller.abort(reason);
        await assert.rejects(rendering, (error) => error === reason);
        assert.equal(cancelsSent(harness) - cancelled, harness.cancels ? 1 : 0);
      } finally {
        harness.finish();
      }
    });

    it("asks again no sooner than a poll's 429 says (Retry-After, or the upstream's own field), and completes", async () => {
      // Scripted for this job's polls alone, once it has an id: a poll a stopped render of an earlier test had
      // already sent may still reach the proxy, and must not take the 429.
      let jobId = '';
      const ofThisJob: Matcher = (method, requestPath) =>
        jobId !== '' &&
        harness.isPoll(method, requestPath) &&
        decodeURIComponent(requestPath).includes(jobId);
      const rendered = job(harness.job);
      await harness.engine.render(rendered, {
        ...renderContext(),
        onAccepted: (accepted) => {
          jobId = accepted?.id ?? '';
          harness.proxy.script({
            matches: ofThisJob,
            status: 429,
            headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
            ...(harness.rateLimited && { body: () => harness.rateLimited?.(RETRY_AFTER_SECONDS) ?? '' }),
            times: 1,
          });
        },
      });
      await assertContractVideo(rendered);
      const polls = harness.proxy.matching(ofThisJob);
      const limited = polls.findIndex((poll) => poll.status === 429 && poll.scripted);
      assert.ok(limited >= 0, 'a poll was answered 429');
      const next = polls[limited + 1];
      assert.ok(next, 'polled again');
      const waited = next.at - (polls[limited]?.at ?? 0);
      assert.ok(waited >= RETRY_AFTER_SECONDS * 1000, `asked again after ${waited} ms`);
    });

    it("keeps its key out of the message of a refusal that quotes the request's headers", {
      skip: noKeyReason(name),
    }, async () => {
      harness.proxy.script({ matches: harness.isSubmit, status: 400, body: echoHeaders, times: 1 });
      const error = await harness.engine.render(job(harness.job), renderContext()).then(
        () => assert.fail('expected the render to fail'),
        (caught: unknown) => caught,
      );
      assert.ok(error instanceof Error);
      assert.ok(harness.key && !error.message.includes(harness.key), error.message);
      assert.ok(!String(error.stack).includes(harness.key ?? ''), 'nor in its stack');
    });

    it('fails with timeout when the time limit passes while the job runs, cancelling it where it can', async () => {
      harness.neverFinish();
      try {
        const cancelled = cancelsSent(harness);
        const error = await harness.engine
          .render(job(harness.job), renderContext(undefined, { deadlineMs: SHORT_DEADLINE_MS }))
          .then(
            () => assert.fail('expected the render to fail'),
            (caught: unknown) => caught,
          );
        assert.ok(error instanceof TaskFailure, String(error));
        assert.equal(error.code, 'timeout', error.message);
        assert.equal(cancelsSent(harness) - cancelled, harness.cancels ? 1 : 0);
      } finally {
        harness.finish();
      }
    });

    it('is never accepted while every submission is answered 503, and ends upstream_unavailable', async () => {
      const before = made(harness);
      harness.proxy.script({
        matches: harness.isSubmit,
        status: 503,
        times: Number.POSITIVE_INFINITY,
      });
      let accepted = false;
      try {
        const error = await harness.engine
          .render(job(harness.job), {
            ...renderContext(undefined, { deadlineMs: SHORT_DEADLINE_MS }),
            onAccepted: () => {
              accepted = true;
            },
          })
          .then(
            () => assert.fail('expected the render to fail'),
            (caught: unknown) => caught,
          );
        assert.ok(error instanceof TaskFailure, String(error));
        assert.equal(error.code, 'upstream_unavailable', error.message);
      } finally {
        harness.proxy.unscript();
      }
      assert.equal(accepted, false, 'never accepted');
      assert.equal(made(harness), before, 'nothing made upstream');
    });
  });
}

/** SGLang Diffusion takes no key: there is none to keep out. */
function noKeyReason(name: string): string | false {
  return name === 'openai (sglang)' ? 'SGLang Diffusion takes no key' : false;
}

/**
 * The relay engine against a second, real videogen process (rendering with its built-in local engine),
 * reached through recording proxies: one in front of its API (the relay's base URL), one in front of its
 * result links (its public URL), so the tests see what the relay sent where.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { TaskFailure } from '../src/domain/errors.js';
import { MODEL_IDS } from '../src/domain/models.js';
import { createEngines, routeEngines } from '../src/engines/create-engines.js';
import { parseEnginesConfig } from '../src/engines/engines-file.js';
import { RelayEngine } from '../src/engines/relay/relay-engine.js';
import { readRelayTask, relayFailure } from '../src/engines/relay/relay-job.js';
import type { RelayOptions } from '../src/engines/relay/relay-options.js';
import type { RenderJob } from '../src/ports/engine.js';
import { RunStopped } from '../src/runner/run-stopped.js';
import { FakeArkServer } from './fakes/ark-server.js';
import { Api } from './helpers/api.js';
import { writeArkEnginesFile } from './helpers/ark-engines-file.js';
import { type AssetServer, startAssetServer } from './helpers/asset-server.js';
import { docsExample } from './helpers/docs-examples.js';
import { imageMeanColour, writeTestImage } from './helpers/media-fixtures.js';
import { colourDistance, frameMeanColour, type Rgb } from './helpers/mp4-facts.js';
import {
  assertContractVideo,
  assertProgressRisesToOne,
  jobMaker,
  renderContext,
} from './helpers/render-jobs.js';
import { type ServerProcess, serverEnv, startServer } from './helpers/server-process.js';

const RED: Rgb = [220, 30, 40];
/** How far (RGB distance) a frame's mean colour may be from the picture it should show. */
const RESEMBLES = 45;
const WRONG_KEY = `vg_dev_${'W'.repeat(40)}`;

interface Seen {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

interface RecordingProxy {
  readonly url: string;
  readonly seen: Seen[];
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'host']);

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    ),
  );
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/**
 * Forwards every request to `target()` and records it. The target is read per request: the proxies start
 * before the upstream, which links to one of them and listens on a port of its own choosing.
 */
async function startRecordingProxy(target: () => string): Promise<RecordingProxy> {
  const seen: Seen[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const method = req.method ?? 'GET';
    seen.push({ method, path: req.url ?? '', headers: req.headers, body: body.toString() });
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => !HOP_BY_HOP.has(name)));
    try {
      const answer = await request(`${target()}${req.url}`, {
        method: method as 'GET',
        headers: headers as Record<string, string>,
        body: body.length > 0 ? body : undefined,
      });
      const out = Object.fromEntries(
        Object.entries(answer.headers).filter(([name]) => !HOP_BY_HOP.has(name)),
      );
      res.writeHead(answer.statusCode, out);
      await pipeline(answer.body, res);
    } catch {
      res.destroy();
    }
  });
  const url = await listen(server);
  return { url, seen, close: () => close(server) };
}

async function freePort(): Promise<number> {
  const server = createServer();
  const url = await listen(server);
  await close(server);
  return Number(new URL(url).port);
}

let dir: string;
let upstream: ServerProcess;
/** The upstream process itself, not through a proxy. */
let upstreamUrl: string;
let apiProxy: RecordingProxy;
let resultsProxy: RecordingProxy;
let assetServer: AssetServer;
let key: string;
let redPng: string;
/** Behind the other server's models of its own `ark-text` and `ark-reference`. */
let ark: FakeArkServer;
const ARK_KEY = 'ark-relay-test-9Kd2Lq7Wz4Xc1Vb6';
const ASSET_ID = 'asset://asset-20260224200602-qn7wr';

function engine(options: Partial<RelayOptions> = {}): RelayEngine {
  return new RelayEngine(
    'upstream',
    { type: 'relay', base_url: apiProxy.url, api_key: key, poll_interval_ms: 50, ...options },
    { baseDir: dir },
  );
}

/** This file's jobs: 4 s of a lighthouse in the fast text model, seed 7, with a callback of our own. */
const relayJob = jobMaker(() => dir, {
  taskPrefix: 'task-relay',
  model: 'videogen-2.0-fast-text-to-video',
  prompt: 'a lighthouse at dusk, waves rolling in',
  seed: 7,
  callbackUrl: 'https://hooks.example.test/ours',
});

/** The requests the relay sent for one job, by the Idempotency-Key it derives from the job's task id. */
function createRequestOf(job: RenderJob): Seen {
  const create = apiProxy.seen.find(
    (s) =>
      s.method === 'POST' &&
      s.path === '/v1/videos/generations' &&
      String(s.headers['idempotency-key']).startsWith(`${job.taskId}-`),
  );
  assert.ok(create, `the relay created a task for ${job.taskId}`);
  return create;
}

/** The upstream task id the relay polled after `create` (the answer to the create itself is not recorded). */
function polledTaskIds(from: number): string[] {
  const ids = apiProxy.seen
    .slice(from)
    .map((s) => /^\/v1\/tasks\/([^/?]+)$/.exec(s.path)?.[1])
    .filter((id): id is string => id !== undefined);
  return [...new Set(ids)];
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-relay-'));
  apiProxy = await startRecordingProxy(() => upstreamUrl);
  resultsProxy = await startRecordingProxy(() => upstreamUrl);
  ark = await FakeArkServer.start({ apiKey: ARK_KEY, cacheDir: join(dir, 'ark-cache') });
  const enginesFile = await writeArkEnginesFile(join(dir, 'upstream-engines.yaml'), {
    baseUrl: ark.baseUrl,
    apiKey: ARK_KEY,
    arkModel: 'dreamina-seedance-2-0-260128',
    options: { poll_interval_ms: 10 },
    models: [
      ...MODEL_IDS.map((id) => `${id}: local`),
      'ark-text: { route: seedance, mode: text }',
      'ark-reference: { route: seedance, mode: reference, image_urls: { min: 0, max: 9 } }',
    ],
  });
  upstream = await startServer(
    serverEnv(join(dir, 'upstream-data'), {
      VIDEOGEN_ENGINES_FILE: enginesFile,
      // Result links point at the second proxy: another origin than the relay's base URL.
      VIDEOGEN_PUBLIC_URL: resultsProxy.url,
      VIDEOGEN_WORKER_CONCURRENCY: '2',
      VIDEOGEN_SHUTDOWN_GRACE_SECONDS: '1',
    }),
  );
  upstreamUrl = upstream.listenUrl;
  const printed = await upstream.firstKey();
  assert.ok(printed, 'the upstream printed its first key');
  key = printed;
  await mkdir(join(dir, 'assets'), { recursive: true });
  // Downloaded assets have no extension: the relay must tell the type from the bytes.
  redPng = join(dir, 'assets', 'image_urls-0');
  await writeTestImage(`${redPng}.png`, { width: 640, height: 360, colour: RED, accent: [250, 250, 250] });
  await rename(`${redPng}.png`, redPng);
  assetServer = await startAssetServer({});
});

after(async () => {
  await upstream?.stop();
  await apiProxy?.close();
  await resultsProxy?.close();
  await assetServer?.close();
  await ark?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('relay engine', () => {
  it('relays a text job end to end', async () => {
    const job = relayJob({ prompt: 'a paper boat on a pond' });
    const ctx = renderContext();
    const before = apiProxy.seen.length;
    await engine().render(job, ctx);

    await assertContractVideo(job);
    assertProgressRisesToOne(ctx.progress);
    assert.ok(
      ctx.progress.some((p) => p > 0 && p < 0.9),
      `the upstream's rendering progress was passed on: ${ctx.progress.join(', ')}`,
    );

    const create = createRequestOf(job);
    assert.equal(create.headers.authorization, `Bearer ${key}`);
    assert.deepEqual(JSON.parse(create.body), {
      model: 'videogen-2.0-fast-text-to-video',
      prompt: 'a paper boat on a pond',
      duration: 4,
      quality: '480p',
      aspect_ratio: '16:9',
      seed: 7,
      generate_audio: false,
    });

    const [taskId, ...others] = polledTaskIds(before);
    assert.ok(taskId, 'the relay polled the upstream task');
    assert.deepEqual(others, []);
    const { status, body: task } = await new Api(upstreamUrl, key).get(taskId);
    assert.equal(status, 200);
    assert.equal(task.status, 'completed');
    assert.equal(task.model, 'videogen-2.0-fast-text-to-video');
    assert.equal(task.seed, 7);
    assert.equal(task.generate_audio, false);

    const download = resultsProxy.seen.find((s) => s.path.startsWith(`/v1/results/${taskId}.mp4?`));
    assert.ok(download, 'the result was fetched from the link the upstream gave');
    assert.equal(download.headers.authorization, undefined, 'no key is sent with the result link');
  });

  it('leaves generate_audio true out, and keeps the soundtrack the other server made', async () => {
    const job = relayJob({ prompt: 'a marching band crossing a bridge', generateAudio: true });
    await engine().render(job, renderContext());
    const sent = JSON.parse(createRequestOf(job).body) as Record<string, unknown>;
    assert.equal('generate_audio' in sent, false, 'left to the other server, which makes sound where it can');
    const facts = await assertContractVideo(job);
    assert.ok(facts.audio, "the other server's local engine made a soundtrack, and it was kept");
  });

  it("passes web_search and asset:// ids on, for the other server's engines to take or refuse", async () => {
    const searching = relayJob({ prompt: 'the latest comet seen from a lighthouse' });
    await engine({ model: 'ark-text' }).render(
      { ...searching, params: { ...searching.params, web_search: true } },
      renderContext(),
    );
    assert.equal(JSON.parse(createRequestOf(searching).body).web_search, true);
    assert.deepEqual(ark.creates.at(-1)?.body.tools, [{ type: 'web_search' }]);
    await assertContractVideo(searching);

    const referenced = relayJob({
      model: 'videogen-2.0-reference-to-video',
      prompt: 'the woman of image 1 waves',
    });
    await engine({ model: 'ark-reference' }).render(
      { ...referenced, params: { ...referenced.params, image_urls: [ASSET_ID] } },
      renderContext(),
    );
    assert.deepEqual(JSON.parse(createRequestOf(referenced).body).image_urls, [ASSET_ID]);
    const content = ark.creates.at(-1)?.body.content as { image_url?: { url: string } }[];
    assert.ok(
      content.some((part) => part.image_url?.url === ASSET_ID),
      JSON.stringify(content),
    );

    // The other server's local engine can do neither: its refusal is the task's.
    const refused = relayJob({ prompt: 'x' });
    const error = await engine()
      .render({ ...refused, params: { ...refused.params, web_search: true } }, renderContext())
      .then(
        () => assert.fail('the render should fail'),
        (failure: unknown) => failure,
      );
    assert.ok(error instanceof TaskFailure);
    assert.match(error.message, /input_not_supported/);
  });

  it('sends a local-only image as a data: URL, with the resolved aspect ratio', async () => {
    const job = relayJob({
      model: 'videogen-2.0-fast-image-to-video',
      ratio: 'adaptive',
      images: [{ url: 'storage:assets/task-relay-x/image_urls-0', path: redPng, width: 640, height: 360 }],
    });
    const ctx = renderContext();
    await engine().render(job, ctx);

    await assertContractVideo(job);
    assertProgressRisesToOne(ctx.progress);
    const sent = JSON.parse(createRequestOf(job).body) as { image_urls: string[]; aspect_ratio: string };
    assert.equal(sent.aspect_ratio, '16:9');
    assert.equal(sent.image_urls.length, 1);
    assert.match(sent.image_urls[0] ?? '', /^data:image\/png;base64,/);
    const first = await frameMeanColour(job.outputPath, 0);
    const image = await imageMeanColour(redPng);
    assert.ok(colourDistance(first, image) < RESEMBLES, `the first frame ${first} shows the image ${image}`);
  });

  it("renders through docs/engines/relay.md's example, as written but for the other server's address", async () => {
    const example = await docsExample('relay');
    const options = example.engines['gpu-cluster'];
    assert.ok(options, 'the example has an engine gpu-cluster');
    options.base_url = apiProxy.url;
    options.poll_interval_ms = 50;
    const config = parseEnginesConfig(example, join(dir, 'relay.yaml'), { GPU_CLUSTER_KEY: key });
    const router = routeEngines(config, createEngines(config));
    assert.deepEqual(router.models().sort(), [
      'videogen-2.0-fast-reference-to-video',
      'videogen-2.0-reference-to-video',
    ]);
    const engine = router.engineFor('videogen-2.0-fast-reference-to-video');
    assert.ok(engine);
    const job = relayJob({
      model: 'videogen-2.0-fast-reference-to-video',
      images: [{ url: 'storage:assets/task-relay-docs/image_urls-0', path: redPng, width: 640, height: 360 }],
    });
    await engine.render(job, renderContext());

    await assertContractVideo(job);
    const create = createRequestOf(job);
    assert.equal(create.headers.authorization, `Bearer ${key}`);
    const sent = JSON.parse(create.body) as { model: string; image_urls: string[] };
    assert.equal(sent.model, 'videogen-2.0-fast-reference-to-video');
    assert.equal(sent.image_urls.length, 1);
  });

  it('keeps the code of an asset failure upstream, naming the engine', async () => {
    const job = relayJob({
      model: 'videogen-2.0-fast-image-to-video',
      ratio: 'adaptive',
      images: [{ url: `${assetServer.url}/missing.png`, path: redPng, width: 640, height: 360 }],
    });
    const ctx = renderContext();
    const error = await engine()
      .render(job, ctx)
      .then(
        () => assert.fail('the render should fail'),
        (e: unknown) => e,
      );
    assert.ok(error instanceof TaskFailure, String(error));
    assert.equal(error.code, 'asset_fetch_failed');
    assert.match(error.message, /^relay engine "upstream": image_urls\[0\]: .*404/);
    const sent = JSON.parse(createRequestOf(job).body) as { image_urls: string[] };
    assert.deepEqual(
      sent.image_urls,
      [`${assetServer.url}/missing.png`],
      'an http(s) URL is passed on as it is',
    );
  });

  it('maps other upstream failures to upstream_error quoting their code and message', () => {
    const label = 'relay engine "upstream"';
    const failed = (code: string, message: string) =>
      relayFailure(
        readRelayTask({ id: 'task-up-1', status: 'failed', progress: 40, error: { code, message } }, label),
        label,
      );
    const generation = failed('generation_failed', 'The engine failed to generate the video.');
    assert.equal(generation.code, 'upstream_error');
    assert.equal(
      generation.message,
      'relay engine "upstream": its task task-up-1 failed with generation_failed: The engine failed to generate the video.',
    );
    const invalid = failed('invalid_asset', 'image_urls[1]: not a readable image, video or audio file');
    assert.equal(invalid.code, 'invalid_asset');
    assert.equal(
      invalid.message,
      'relay engine "upstream": image_urls[1]: not a readable image, video or audio file',
    );
    assert.throws(
      () => readRelayTask({ error: { code: 'oops' } }, label),
      (e) => e instanceof TaskFailure && e.code === 'upstream_error' && /is not a task/.test(e.message),
    );
  });

  it('turns a refused key into upstream_error without quoting the key', async () => {
    const job = relayJob();
    const error = await engine({ api_key: WRONG_KEY })
      .render(job, renderContext())
      .then(
        () => assert.fail('the render should fail'),
        (e: unknown) => e,
      );
    assert.ok(error instanceof TaskFailure, String(error));
    assert.equal(error.code, 'upstream_error');
    assert.match(error.message, /^relay engine "upstream": POST \/v1\/videos\/generations answered HTTP 401/);
    assert.ok(!error.message.includes(WRONG_KEY), error.message);
    assert.ok(!error.message.includes(WRONG_KEY.slice(0, 12)), error.message);
  });

  it('keeps the key out of a message even when a server echoes it back', async () => {
    const echo = createServer((req, res) => {
      res.writeHead(401, { 'content-type': 'text/plain' }).end(`refused: ${req.headers.authorization}`);
    });
    const url = await listen(echo);
    try {
      const error = await engine({ base_url: url, api_key: WRONG_KEY })
        .render(relayJob(), renderContext())
        .then(
          () => assert.fail('the render should fail'),
          (e: unknown) => e,
        );
      assert.ok(error instanceof TaskFailure, String(error));
      assert.equal(error.code, 'upstream_error');
      assert.match(error.message, /HTTP 401: refused: Bearer \[redacted\]/);
      assert.ok(!error.message.includes(WRONG_KEY), error.message);
      assert.equal(error.cause, undefined, 'a redacted error does not carry the original as its cause');
    } finally {
      await close(echo);
    }
  });

  it('check() accepts a good key and names a bad key or a dead server', async () => {
    await engine().check(AbortSignal.timeout(10_000));

    const refused = await engine({ api_key: WRONG_KEY })
      .check(AbortSignal.timeout(10_000))
      .then(
        () => assert.fail('a wrong key should fail the check'),
        (e: unknown) => e as Error,
      );
    assert.match(refused.message, /^relay engine "upstream": the API key was refused .*HTTP 401/);
    assert.ok(!refused.message.includes(WRONG_KEY), refused.message);

    const deadUrl = `http://127.0.0.1:${await freePort()}`;
    const dead = await engine({ base_url: deadUrl })
      .check(AbortSignal.timeout(10_000))
      .then(
        () => assert.fail('a dead server should fail the check'),
        (e: unknown) => e as Error,
      );
    assert.match(
      dead.message,
      /^relay engine "upstream": http:\/\/127\.0\.0\.1:\d+ could not be reached: .*ECONNREFUSED/,
    );
  });

  it('rejects at once on an abort during the create, and cancels the task the create still made', {
    timeout: 60_000,
  }, async () => {
    const requests: string[] = [];
    let created: () => void = () => undefined;
    const createSeen = new Promise<void>((resolve) => {
      created = resolve;
    });
    let cancelled: () => void = () => undefined;
    const cancelSeen = new Promise<void>((resolve) => {
      cancelled = resolve;
    });
    // The create's answer is held until the test sends it.
    let sendCreateAnswer: () => void = () => undefined;
    let createOpen = false;
    const slow = createServer((req, res) => {
      requests.push(`${req.method} ${req.url}`);
      req.resume();
      if (req.url === '/v1/videos/generations') {
        const task = { id: 'task-slow-1', object: 'video.generation.task', status: 'pending', progress: 0 };
        createOpen = true;
        res.on('close', () => {
          createOpen = false;
        });
        sendCreateAnswer = () =>
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(task));
        created();
      } else {
        if (req.url === '/v1/tasks/task-slow-1/cancel') cancelled();
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"code":"not_found"}}');
      }
    });
    const url = await listen(slow);
    try {
      const controller = new AbortController();
      const reason = new Error('stopped during the create');
      const rendering = engine({ base_url: url }).render(relayJob(), renderContext(controller.signal));
      await createSeen;
      controller.abort(reason);
      // Rejected while the create's answer is still held: it did not wait for it.
      await assert.rejects(rendering, (error) => error === reason);
      assert.ok(createOpen, 'the create is still waiting for its answer');
      assert.deepEqual(requests, ['POST /v1/videos/generations']);
      // The answer, once it comes (within the grace the relay gives it), names the task to cancel.
      sendCreateAnswer();
      await cancelSeen;
      assert.deepEqual(requests, ['POST /v1/videos/generations', 'POST /v1/tasks/task-slow-1/cancel']);
    } finally {
      await close(slow);
    }
  });

  it('past the time limit (the runner aborts with RunStopped timeout) it cancels the upstream task', async () => {
    const job = relayJob({ model: 'videogen-2.0-text-to-video', quality: '1080p', duration: 15 });
    const controller = new AbortController();
    const limit = new RunStopped('timeout');
    // The deadline passes while the upstream renders (its first progress); the runner then aborts.
    let expired = false;
    const ctx = renderContext(controller.signal, {
      onProgress: (fraction) => {
        if (fraction > 0 && !expired) {
          expired = true;
          controller.abort(limit);
        }
      },
    });
    Object.defineProperty(ctx, 'deadline', { get: () => (expired ? Date.now() - 1 : Date.now() + 60_000) });
    const before = apiProxy.seen.length;
    await assert.rejects(engine().render(job, ctx), (error: unknown) => error === limit);
    const [taskId] = polledTaskIds(before);
    assert.ok(taskId);
    assert.ok(
      apiProxy.seen.some((s) => s.method === 'POST' && s.path === `/v1/tasks/${taskId}/cancel`),
      'the upstream was asked to cancel its task',
    );
  });

  it('stops promptly on abort, asks the upstream to cancel, and rejects with the reason', async () => {
    // A long standard-quality render, so the abort lands while the upstream is rendering.
    const job = relayJob({ model: 'videogen-2.0-text-to-video', quality: '1080p', duration: 15 });
    const controller = new AbortController();
    const reason = new Error('stopped by the test');
    const ctx = renderContext(controller.signal, {
      onProgress: (fraction) => {
        if (fraction > 0 && !controller.signal.aborted) controller.abort(reason);
      },
    });
    const before = apiProxy.seen.length;
    const rendering = engine().render(job, ctx);
    await assert.rejects(rendering, (error) => error === reason);

    // Stopped, not waited for: the upstream task was cancelled mid-render rather than left to complete.
    const [taskId] = polledTaskIds(before);
    assert.ok(taskId);
    assert.ok(
      apiProxy.seen.some((s) => s.method === 'POST' && s.path === `/v1/tasks/${taskId}/cancel`),
      'the upstream was asked to cancel its task',
    );
    const { body: task } = await new Api(upstreamUrl, key).get(taskId);
    assert.equal(task.status, 'failed', 'the upstream videogen cancelled its task');
    assert.equal(task.error?.code, 'cancelled');
  });
});

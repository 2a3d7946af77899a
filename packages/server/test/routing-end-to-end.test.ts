/**
 * Fallback through the whole service: a model ID routed to an SGLang server (the strict fake) and then the
 * built-in engine. A server that answers 503 sends the task on to the next engine; its open circuit sends the
 * next task there without asking it; a server that accepted the job keeps the task even when it then goes away.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { PublicTask } from '../src/domain/task.js';
import { FakeVideoServer } from './fakes/video-servers.js';
import { Api } from './helpers/api.js';
import { mp4Facts } from './helpers/mp4-facts.js';
import { startTestService, type TestService } from './helpers/test-service.js';
import { startWebhookReceiver, type WebhookReceiver } from './helpers/webhook-receiver.js';

const ROUTED = 'videogen-2.0-fast-text-to-video';
/** More 503s than an engine can ask for within its accept timeout. */
const EVERY_TIME = 10_000;

let dir: string;
const closers: (() => Promise<unknown>)[] = [];

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-routing-'));
});
after(async () => {
  for (const close of closers.reverse()) await close();
  await rm(dir, { recursive: true, force: true });
});

function sglangEngine(server: FakeVideoServer, extra: string[] = []): string[] {
  return [
    '    type: openai',
    '    server: sglang',
    `    base_url: ${server.url}`,
    `    model: ${server.servedModel}`,
    '    sizes: [1280x720, 720x1280, 832x480, 480x832]',
    '    poll_interval_ms: 20',
    ...extra,
  ];
}

async function serviceWith(name: string, yaml: string[], env: Record<string, string> = {}) {
  const file = join(dir, `${name}.yaml`);
  await writeFile(file, [...yaml, ''].join('\n'));
  const service = await startTestService({
    VIDEOGEN_ENGINES_FILE: file,
    VIDEOGEN_WORKER_CONCURRENCY: '1',
    ...env,
  });
  closers.push(() => service.close());
  const { key } = await service.newKey();
  return { service, api: new Api(service.url, key) };
}

async function probe(test: TestService, task: PublicTask) {
  const video = await fetch(task.results?.[0] ?? '');
  assert.equal(video.status, 200);
  const path = join(dir, `${task.id}.mp4`);
  await writeFile(path, Buffer.from(await video.arrayBuffer()));
  const facts = await mp4Facts(path);
  assert.equal(facts.video?.width, 854);
  assert.equal(facts.video?.height, 480);
  assert.ok(Math.abs(facts.duration - 4) <= 1 / 24, `duration ${facts.duration}`);
  assert.ok(test.url);
}

describe('fallback along a route', () => {
  let gpu: FakeVideoServer;
  let test: TestService;
  let api: Api;
  let hooks: WebhookReceiver;

  before(async () => {
    gpu = await FakeVideoServer.start({
      kind: 'sglang',
      cacheDir: join(dir, 'gpu-cache'),
      picture: { colour: '0x2060a0' },
    });
    closers.push(() => gpu.close());
    hooks = await startWebhookReceiver();
    closers.push(() => hooks.close());
    ({ service: test, api } = await serviceWith('fallback', [
      'engines:',
      '  gpu:',
      ...sglangEngine(gpu, ['    accept_timeout_seconds: 1']),
      'models:',
      `  ${ROUTED}: [gpu, local]`,
      'routing:',
      '  circuit_breaker: { failures: 1, cooldown_seconds: 3600 }',
    ]));
  });

  it('moves a task on from a server answering 503, and the client sees one task', async () => {
    gpu.busyAnswers.push(...Array.from({ length: EVERY_TIME }, () => ({ status: 503 })));
    const { status, body: created } = await api.create({
      model: ROUTED,
      prompt: 'a lighthouse at dusk',
      duration: 4,
      quality: '480p',
      callback_url: `${hooks.url}/hook`,
    });
    assert.equal(status, 200, JSON.stringify(created));
    // waitForFinal also checks that progress never went down.
    const final = await api.waitForFinal(created.id, 120_000);
    assert.equal(final.status, 'completed', JSON.stringify(final.error));
    await probe(test, final);
    assert.ok(
      gpu.requests.some((r) => r.path === '/v1/videos' && r.status === 503),
      'the server was asked',
    );
    assert.equal(gpu.creates.length, 0, 'and made nothing');
    assert.equal((await test.service.store.getTask(created.id))?.engine, 'local');

    const callbacks = await hooks.waitFor(2);
    const statuses = callbacks.map((hook) => (JSON.parse(hook.body) as PublicTask).status);
    assert.deepEqual(statuses, ['processing', 'completed'], 'one processing callback, then the result');

    const stats = await test.service.store.engineStats();
    assert.equal(stats.circuits.get('gpu')?.failures, 1);
    const metrics = await (await fetch(`${test.url}/metrics`)).text();
    assert.match(
      metrics,
      /videogen_engine_fallbacks_total\{model="videogen-2\.0-fast-text-to-video",from_engine="gpu",to_engine="local"\} 1/,
    );
    assert.match(metrics, /videogen_engine_circuit_open\{engine="gpu"\} 1/);
  });

  it('sends the next task past the open circuit without asking the server', async () => {
    gpu.busyAnswers.length = 0;
    const asked = gpu.requests.length;
    const { body: created } = await api.create({
      model: ROUTED,
      prompt: 'again',
      duration: 4,
      quality: '480p',
    });
    const final = await api.waitForFinal(created.id, 120_000);
    assert.equal(final.status, 'completed', JSON.stringify(final.error));
    await probe(test, final);
    assert.equal(gpu.requests.length, asked, 'the open circuit kept the task away from the server');
    assert.equal((await test.service.store.getTask(created.id))?.engine, 'local');
  });
});

describe('no fallback once the upstream accepted the job', () => {
  it('keeps the task on the server that took it, though it goes away and the accept timeout has passed', async () => {
    const gpu = await FakeVideoServer.start({
      kind: 'sglang',
      cacheDir: join(dir, 'gone-cache'),
      picture: { colour: '0x2060a0' },
    });
    gpu.outcome = 'never-finish';
    let closed = false;
    closers.push(() => (closed ? Promise.resolve() : gpu.close()));
    const { service, api } = await serviceWith('accepted', [
      'engines:',
      '  gpu:',
      // 3 s: the job's POST to the fake, in this process, must be answered within it even on a loaded machine.
      // 8 s: once the server is gone, the job's own time limit is what ends the task.
      ...sglangEngine(gpu, ['    accept_timeout_seconds: 3', '    job_timeout_seconds: 8']),
      'models:',
      `  ${ROUTED}: [gpu, local]`,
    ]);
    const { body: created } = await api.create({
      model: ROUTED,
      prompt: 'accepted',
      duration: 4,
      quality: '480p',
    });
    await api.pollUntil(created.id, () => gpu.creates.length > 0, 60_000, 20);
    assert.equal(gpu.creates.length, 1, 'the server took the job');
    await gpu.close();
    closed = true;
    const final = await api.waitForFinal(created.id, 60_000);
    assert.equal(final.status, 'failed');
    assert.ok(
      final.error?.code === 'timeout' || final.error?.code === 'upstream_unavailable',
      JSON.stringify(final.error),
    );
    assert.equal(
      (await service.service.store.getTask(created.id))?.engine,
      'gpu',
      'never moved to the local engine',
    );
    const metrics = await (await fetch(`${service.url}/metrics`)).text();
    assert.doesNotMatch(metrics, /videogen_engine_fallbacks_total\{/);
  });
});

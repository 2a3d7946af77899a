/**
 * Provider callbacks (docs/engines/README.md#provider-callbacks), end to end against the strict fakes of Ark,
 * Replicate and fal, each calling back as the real service does: with `callbacks: true` and a poll interval of
 * ten minutes, a task completes as soon as its provider's delivery comes, its job having been polled once before;
 * a delivery with a bad or stale signature is refused and wakes nothing; a forged Ark delivery claiming success
 * for a running job makes its poll happen, which finds it still running; a delivery for no running job is taken
 * and changes nothing; without callbacks the submissions carry none and polling alone finishes the tasks; the
 * start is refused without a public URL the providers can use; and an API process and a worker process sharing
 * PostgreSQL pass the wake between them.
 *
 * "Wakes nothing" is never seen by waiting: polls are counted on the fake after a later, legitimate delivery,
 * whose poll is the only other one there may be. The gateway's public URL is `https://videogen.test`, which each
 * fake's callback network routes to the test server's own address, as a TLS-terminating proxy would.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { startService } from '../src/service.js';
import { FakeArkServer } from './fakes/ark-server.js';
import { FakeFalServer, SEEDANCE_T2V } from './fakes/fal-server.js';
import { FakeReplicate } from './fakes/replicate-server.js';
import { Api, type ErrorBody } from './helpers/api.js';
import { freshSchemas, postgresSuite, TEST_DATABASE_URL } from './helpers/postgres.js';
import { startTestService, type TestService } from './helpers/test-service.js';
import { until } from './helpers/until.js';

const PUBLIC_URL = 'https://videogen.test';
const TEN_MINUTES = 600_000;
const ARK_KEY = 'ark-test-7Yq2Lm9Xc4Vb8Nz1Rt6Pw3Hs';
const REPLICATE_KEY = 'r8_TestKey4fJ9qLm2Xv7Rt1Bn6Wc3Zp8Hs5';
const FAL_KEY = '6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b:8e3f1a9c5d7b2e4f6a8c0b1d3e5f7a9c';
const MODEL = 'videogen-2.0-text-to-video';
const REQUEST = { model: MODEL, prompt: 'a lighthouse at dusk', duration: 4, quality: '480p' };

const postgres = await postgresSuite();

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-provider-callbacks-'));
});
after(() => rm(dir, { recursive: true, force: true }));

/** The server's own address: its public URL is the proxy's. */
function listenerUrl(server: TestService): string {
  const address = server.service.app.server.address() as AddressInfo;
  return `http://127.0.0.1:${address.port}`;
}

async function enginesFile(name: string, engine: Record<string, unknown>): Promise<string> {
  const path = join(dir, `${name}.json`);
  await writeFile(path, JSON.stringify({ engines: { [name]: engine }, models: { [MODEL]: name } }));
  return path;
}

async function serve(enginesPath: string, env: Record<string, string> = {}): Promise<TestService> {
  return startTestService({
    VIDEOGEN_ENGINES_FILE: enginesPath,
    VIDEOGEN_PUBLIC_URL: PUBLIC_URL,
    VIDEOGEN_WORKER_CONCURRENCY: '1',
    ...env,
  });
}

/** Starts a service that must refuse to start: it opens nothing before it does. */
function startRefused(enginesPath: string, publicUrl: string | undefined): Promise<unknown> {
  const config = loadConfig({
    VIDEOGEN_DATA_DIR: join(dir, 'refused'),
    VIDEOGEN_HOST: '127.0.0.1',
    VIDEOGEN_PORT: '0',
    VIDEOGEN_ENGINES_FILE: enginesPath,
    ...(publicUrl && { VIDEOGEN_PUBLIC_URL: publicUrl }),
  });
  return startService(config, pino({ level: 'silent' }));
}

/** POSTs a delivery straight to the server's callback route, as anyone on the internet could. */
async function deliver(
  server: TestService,
  engine: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; code: string | undefined }> {
  const answer = await fetch(`${listenerUrl(server)}/v1/provider-callbacks/${engine}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  const text = await answer.text();
  const code = text ? (JSON.parse(text) as Partial<ErrorBody>).error?.code : undefined;
  return { status: answer.status, code };
}

async function taskStatus(api: Api, id: string): Promise<string> {
  return (await api.get(id)).body.status;
}

describe('provider callbacks: ark', () => {
  let ark: FakeArkServer;
  let server: TestService;
  let api: Api;
  before(async () => {
    ark = await FakeArkServer.start({ apiKey: ARK_KEY, cacheDir: join(dir, 'ark-cache') });
    // Ark moves the task on in its own time (start, finish), never because it was polled.
    ark.pollsQueued = Number.POSITIVE_INFINITY;
    const path = await enginesFile('seedance', {
      type: 'ark',
      base_url: ark.baseUrl,
      api_key: ARK_KEY,
      model: 'dreamina-seedance-2-0-fast-260128',
      poll_interval_ms: TEN_MINUTES,
      callbacks: true,
    });
    server = await serve(path);
    ark.callbackNetwork.route(PUBLIC_URL, listenerUrl(server));
    api = new Api(listenerUrl(server), (await server.newKey()).key);
  });
  after(async () => {
    await server?.close();
    await ark?.close();
  });

  const polls = () =>
    ark.requests.filter((r) => r.method === 'GET' && /\/tasks\/cgt-[^/]+$/.test(r.path)).length;

  it('polls at once on each callback, believes no forged one, and completes on the real end', async () => {
    const { body: task } = await api.create(REQUEST);
    const create = await until(() => ark.creates[0], 'the task created on Ark');
    assert.equal(create.body.callback_url, `${PUBLIC_URL}/v1/provider-callbacks/seedance`);
    await until(() => polls() === 1, 'the first poll');

    const running = await ark.start(create.id);
    assert.equal(running?.status, 204, 'the running callback taken');
    await until(() => polls() === 2, 'the poll the running callback brought forward');

    const unknown = JSON.stringify({ id: 'cgt-20260101000000-zzzzz', status: 'succeeded' });
    assert.deepEqual(await deliver(server, 'seedance', unknown), { status: 204, code: undefined });
    const forged = JSON.stringify({
      id: create.id,
      model: 'dreamina-seedance-2-0-fast',
      status: 'succeeded',
      content: { video_url: 'https://attacker.example/video.mp4' },
    });
    assert.deepEqual(await deliver(server, 'seedance', forged), { status: 204, code: undefined });
    await until(() => polls() === 3, 'the poll the forged callback brought forward');
    assert.equal(ark.statusOf(create.id), 'running');
    assert.equal(await taskStatus(api, task.id), 'processing', 'read back from Ark: still running');

    const finished = await ark.finish(create.id);
    assert.equal(finished?.status, 204);
    const final = await api.waitForFinal(task.id, 60_000);
    assert.equal(final.status, 'completed', JSON.stringify(final.error));
    assert.equal(polls(), 4, 'one poll per delivery that named the job, none for the unknown one');
    assert.ok(
      ark.requests.some((r) => r.path.startsWith('/tos/')),
      "the video was Ark's own",
    );
  });

  it('refuses a delivery that is not a task object, and one for an engine without callbacks', async () => {
    assert.deepEqual(await deliver(server, 'seedance', 'not json'), { status: 400, code: 'invalid_json' });
    assert.deepEqual(await deliver(server, 'seedance', '{"status": "running"}'), {
      status: 400,
      code: 'invalid_json',
    });
    assert.deepEqual(await deliver(server, 'other', '{"id": "cgt-1"}'), { status: 404, code: 'not_found' });
    const large = JSON.stringify({ id: 'cgt-1', padding: 'x'.repeat(1024 * 1024) });
    assert.deepEqual(await deliver(server, 'seedance', large), { status: 413, code: 'payload_too_large' });
  });

  it('gives Ark no callback_url when the option is off, and polling alone finishes the task', async () => {
    const quiet = await FakeArkServer.start({ apiKey: ARK_KEY, cacheDir: join(dir, 'ark-cache') });
    const path = await enginesFile('polled', {
      type: 'ark',
      base_url: quiet.baseUrl,
      api_key: ARK_KEY,
      model: 'dreamina-seedance-2-0-fast-260128',
      poll_interval_ms: 20,
    });
    const polled = await serve(path, { VIDEOGEN_PUBLIC_URL: '' });
    try {
      const client = new Api(polled.url, (await polled.newKey()).key);
      const { body: task } = await client.create(REQUEST);
      const final = await client.waitForFinal(task.id, 60_000);
      assert.equal(final.status, 'completed', JSON.stringify(final.error));
      assert.equal(quiet.creates[0]?.body.callback_url, undefined);
      assert.deepEqual(quiet.callbacks, []);
    } finally {
      await polled.close();
      await quiet.close();
    }
  });
});

describe('provider callbacks: replicate', () => {
  let replicate: FakeReplicate;
  let server: TestService;
  let api: Api;
  const engine = (extra: Record<string, unknown>) => ({
    type: 'replicate',
    base_url: replicate.url,
    api_key: REPLICATE_KEY,
    model: 'bytedance/seedance-1-pro',
    input: { prompt: '{{prompt}}', duration: '{{duration}}', resolution: '{{resolution}}', fps: 24 },
    durations: [3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
    resolutions: ['480p', '720p', '1080p'],
    ...extra,
  });
  before(async () => {
    replicate = await FakeReplicate.start({ apiKey: REPLICATE_KEY, cacheDir: join(dir, 'replicate-cache') });
    // The model runs in its own time (finish), never because it was polled.
    replicate.pollsToFinish = Number.POSITIVE_INFINITY;
    server = await serve(
      await enginesFile('seedance', engine({ poll_interval_ms: TEN_MINUTES, callbacks: true })),
    );
    replicate.callbackNetwork.route(PUBLIC_URL, listenerUrl(server));
    api = new Api(listenerUrl(server), (await server.newKey()).key);
  });
  after(async () => {
    await server?.close();
    await replicate?.close();
  });

  const polls = () => replicate.requests.filter((r) => r.route === 'poll').length;

  it('refuses bad and stale signatures, waking nothing, and completes on the signed webhook', async () => {
    const { body: task } = await api.create(REQUEST);
    const create = await until(() => replicate.creates[0], 'the prediction created');
    assert.equal(create.body.webhook, `${PUBLIC_URL}/v1/provider-callbacks/seedance`);
    assert.deepEqual(create.body.webhook_events_filter, ['completed']);
    await until(() => polls() === 1, 'the first poll');
    const id = replicate.running[0] ?? '';
    const claim = JSON.stringify({
      ...replicate.prediction(id),
      status: 'succeeded',
      output: 'https://x/y.mp4',
    });

    const otherSecret = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;
    const refusals = [
      await deliver(server, 'seedance', claim, replicate.signWebhook(claim, { secret: otherSecret })),
      await deliver(
        server,
        'seedance',
        claim,
        replicate.signWebhook(claim, { at: new Date(Date.now() - 10 * 60_000) }),
      ),
      await deliver(server, 'seedance', claim),
      // Signed, then changed.
      await deliver(server, 'seedance', claim.replace('succeeded', 'failed'), replicate.signWebhook(claim)),
    ];
    for (const refusal of refusals) {
      assert.deepEqual(refusal, { status: 401, code: 'invalid_callback_signature' });
    }

    const completed = await replicate.finish(id);
    assert.equal(completed?.status, 204, 'the signed webhook taken');
    const final = await api.waitForFinal(task.id, 60_000);
    assert.equal(final.status, 'completed', JSON.stringify(final.error));
    assert.equal(polls(), 2, 'the first poll and the one the webhook brought forward: none for the refused');
    assert.equal(
      replicate.requests.filter((r) => r.route === 'secret').length,
      1,
      'the signing secret fetched once, with the key',
    );
  });

  it('is refused at start without an https public URL', async () => {
    const path = await enginesFile('strict', engine({ callbacks: true }));
    await assert.rejects(
      startRefused(path, undefined),
      /VIDEOGEN_PUBLIC_URL: must be set: engine "strict" asks the provider to call back there/,
    );
    await assert.rejects(
      startRefused(path, 'http://videogen.test'),
      /VIDEOGEN_PUBLIC_URL: must be an https URL: Replicate takes only HTTPS webhook URLs/,
    );
  });

  it('sends no webhook when the option is off, and polling alone finishes the task', async () => {
    const quiet = await FakeReplicate.start({
      apiKey: REPLICATE_KEY,
      cacheDir: join(dir, 'replicate-cache'),
    });
    const polled = await serve(
      await enginesFile('polled', { ...engine({ poll_interval_ms: 20 }), base_url: quiet.url }),
      { VIDEOGEN_PUBLIC_URL: '' },
    );
    try {
      const client = new Api(polled.url, (await polled.newKey()).key);
      const { body: task } = await client.create(REQUEST);
      const final = await client.waitForFinal(task.id, 60_000);
      assert.equal(final.status, 'completed', JSON.stringify(final.error));
      assert.equal(quiet.creates[0]?.body.webhook, undefined);
      assert.deepEqual(quiet.webhooks, []);
    } finally {
      await polled.close();
      await quiet.close();
    }
  });
});

describe('provider callbacks: fal', () => {
  let fal: FakeFalServer;
  let server: TestService;
  let api: Api;
  const engine = (extra: Record<string, unknown>) => ({
    type: 'fal',
    base_url: fal.url,
    api_key: FAL_KEY,
    model: SEEDANCE_T2V,
    input: { prompt: '{{prompt}}', duration: '{{duration|text}}', resolution: '{{resolution}}' },
    durations: [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
    resolutions: ['480p', '720p', '1080p'],
    ...extra,
  });
  before(async () => {
    fal = await FakeFalServer.start({ apiKey: FAL_KEY, cacheDir: join(dir, 'fal-cache') });
    // The model runs in its own time (finish), never because it was polled.
    fal.pollsToFinish = Number.POSITIVE_INFINITY;
    server = await serve(
      await enginesFile(
        'seedance',
        engine({ poll_interval_ms: TEN_MINUTES, callbacks: true, webhook_jwks_url: fal.jwksUrl }),
      ),
    );
    fal.callbackNetwork.route(PUBLIC_URL, listenerUrl(server));
    api = new Api(listenerUrl(server), (await server.newKey()).key);
  });
  after(async () => {
    await server?.close();
    await fal?.close();
  });

  const polls = () => fal.requests.filter((r) => r.path.endsWith('/status')).length;

  it('refuses bad and stale signatures, waking nothing, and completes on the signed webhook', async () => {
    const { body: task } = await api.create(REQUEST);
    const submit = await until(() => fal.submits[0], 'the request submitted');
    assert.equal(submit.webhook, `${PUBLIC_URL}/v1/provider-callbacks/seedance`);
    await until(() => polls() === 1, 'the first poll');
    const id = fal.running[0] ?? '';
    const claim = JSON.stringify({ request_id: id, gateway_request_id: id, status: 'OK', payload: {} });

    const stranger = generateKeyPairSync('ed25519').privateKey;
    const refusals = [
      await deliver(server, 'seedance', claim, fal.signWebhook(id, claim, { key: stranger })),
      await deliver(
        server,
        'seedance',
        claim,
        fal.signWebhook(id, claim, { at: new Date(Date.now() - 10 * 60_000) }),
      ),
      await deliver(
        server,
        'seedance',
        claim,
        fal.signWebhook(id, claim, { at: new Date(Date.now() + 10 * 60_000) }),
      ),
      await deliver(server, 'seedance', claim),
      await deliver(server, 'seedance', claim.replace('"OK"', '"ERROR"'), fal.signWebhook(id, claim)),
    ];
    for (const refusal of refusals) {
      assert.deepEqual(refusal, { status: 401, code: 'invalid_callback_signature' });
    }

    const completed = await fal.finish(id);
    assert.equal(completed?.status, 204, 'the signed webhook taken');
    const final = await api.waitForFinal(task.id, 60_000);
    assert.equal(final.status, 'completed', JSON.stringify(final.error));
    assert.equal(polls(), 2, 'the first poll and the one the webhook brought forward: none for the refused');
    assert.equal(
      fal.jwksRequests,
      1,
      "fal's keys fetched once, and again only for a delivery they did not verify",
    );
  });

  it('answers 503 upstream_unavailable, with Retry-After, when fal’s keys cannot be fetched', async () => {
    const path = await enginesFile(
      'keyless',
      engine({ callbacks: true, webhook_jwks_url: `${fal.url}/no-such-jwks.json` }),
    );
    const keyless = await serve(path);
    try {
      const body = JSON.stringify({ request_id: 'r-1', status: 'OK', payload: {} });
      const answer = await fetch(`${listenerUrl(keyless)}/v1/provider-callbacks/keyless`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...fal.signWebhook('r-1', body) },
        body,
      });
      assert.equal(answer.status, 503);
      assert.equal(answer.headers.get('retry-after'), '30');
      assert.equal(((await answer.json()) as ErrorBody).error.code, 'upstream_unavailable');
    } finally {
      await keyless.close();
    }
  });

  it('sends no fal_webhook when the option is off, and polling alone finishes the task', async () => {
    const quiet = await FakeFalServer.start({ apiKey: FAL_KEY, cacheDir: join(dir, 'fal-cache') });
    const polled = await serve(
      await enginesFile('polled', { ...engine({ poll_interval_ms: 20 }), base_url: quiet.url }),
      { VIDEOGEN_PUBLIC_URL: '' },
    );
    try {
      const client = new Api(polled.url, (await polled.newKey()).key);
      const { body: task } = await client.create(REQUEST);
      const final = await client.waitForFinal(task.id, 60_000);
      assert.equal(final.status, 'completed', JSON.stringify(final.error));
      assert.equal(quiet.submits[0]?.webhook, undefined);
      assert.deepEqual(quiet.webhooks, []);
    } finally {
      await polled.close();
      await quiet.close();
    }
  });
});

describe('provider callbacks across processes on PostgreSQL', postgres, () => {
  let ark: FakeArkServer;
  const servers: TestService[] = [];
  // Registered before freshSchemas registers its own: the schema is dropped once the services are closed.
  after(async () => {
    await Promise.all(servers.map((server) => server.close()));
    await ark?.close();
  });
  const schema = freshSchemas()();

  it("wakes the worker process's poll from the API process that took Ark's callback", async () => {
    ark = await FakeArkServer.start({ apiKey: ARK_KEY, cacheDir: join(dir, 'ark-cache') });
    ark.pollsQueued = Number.POSITIVE_INFINITY;
    const path = await enginesFile('cluster', {
      type: 'ark',
      base_url: ark.baseUrl,
      api_key: ARK_KEY,
      model: 'dreamina-seedance-2-0-fast-260128',
      poll_interval_ms: TEN_MINUTES,
      callbacks: true,
    });
    const database = { VIDEOGEN_DATABASE_URL: TEST_DATABASE_URL, VIDEOGEN_DATABASE_SCHEMA: schema };
    const apiProcess = await serve(path, {
      ...database,
      VIDEOGEN_ROLE: 'api',
      VIDEOGEN_WORKER_CONCURRENCY: '0',
    });
    servers.push(apiProcess);
    const worker = await serve(path, { ...database, VIDEOGEN_ROLE: 'worker' });
    servers.push(worker);
    ark.callbackNetwork.route(PUBLIC_URL, listenerUrl(apiProcess));
    const client = new Api(listenerUrl(apiProcess), (await apiProcess.newKey()).key);

    const { body: task } = await client.create(REQUEST);
    const create = await until(() => ark.creates[0], 'the task created on Ark');
    const polls = () => ark.requests.filter((r) => r.method === 'GET' && r.path.endsWith(create.id)).length;
    await until(() => polls() === 1, "the worker's first poll");
    const finished = await ark.finish(create.id);
    assert.equal(finished?.status, 204, 'taken by the API process');
    await until(() => polls() === 2, "the worker's poll, brought forward over LISTEN/NOTIFY");
    const final = await client.waitForFinal(task.id, 60_000);
    assert.equal(final.status, 'completed', JSON.stringify(final.error));
  });
});

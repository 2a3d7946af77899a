/**
 * Usage and budgets through real HTTP, with tasks rendered by the local engine: `GET /v1/usage` sums exactly the
 * completed tasks' durations and their cost at the engines file's prices (failed and cancelled tasks count
 * nothing), the Prometheus counters carry the same figures, and a creation past a monthly limit is `402
 * budget_exceeded`, exactly at the limit under 20 concurrent creations, on SQLite and across several service
 * instances sharing one PostgreSQL schema.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BudgetError, VideogenClient } from '@videogen/client';
import { createApiKey } from '../src/accounts/api-keys.js';
import { MODEL_IDS } from '../src/domain/models.js';
import type { UsageReport } from '../src/domain/usage-report.js';
import { ERROR_STATUSES } from '../src/http/error-statuses.js';
import type { Store } from '../src/ports/store.js';
import { Api, type ErrorBody } from './helpers/api.js';
import { freshSchemas, postgresSuite, TEST_DATABASE_URL } from './helpers/postgres.js';
import { startTestService, type TestService } from './helpers/test-service.js';

const FAST = 'videogen-2.0-fast-text-to-video';
const request = (duration: number) => ({ model: FAST, prompt: 'a paper boat', duration, quality: '480p' });
const postgres = await postgresSuite();

let dir: string;
let enginesFile: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-usage-'));
  enginesFile = join(dir, 'engines.yaml');
  const models = MODEL_IDS.map((id) => `  ${id}: local`).join('\n');
  await writeFile(
    enginesFile,
    `models:\n${models}\nprices:\n  currency: USD\n  models:\n    ${FAST}: { 480p: 0.05, 720p: 0.1 }\n`,
  );
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function keyWithLimits(store: Store, accountId: string, monthlyVideoSeconds: number): Promise<string> {
  const created = await createApiKey(store, {
    name: 'limited',
    environment: 'development',
    accountId,
    limits: { monthlyVideoSeconds, monthlyBudgetMicros: null },
  });
  return created.key;
}

/** 20 creations at once of 4 s each, against a limit that allows 10 of them. */
async function twentyAtOnce(apis: readonly Api[]): Promise<{ created: number; refused: number }> {
  const answers = await Promise.all(
    Array.from({ length: 20 }, (_, i) => (apis[i % apis.length] as Api).create(request(4))),
  );
  for (const answer of answers) assert.ok([200, 402].includes(answer.status), JSON.stringify(answer.body));
  return {
    created: answers.filter((a) => a.status === 200).length,
    refused: answers.filter(
      (a) => a.status === 402 && (a.body as unknown as ErrorBody).error.code === 'budget_exceeded',
    ).length,
  };
}

describe('usage and budgets over HTTP (SQLite, local engine)', () => {
  let server: TestService;
  let api: Api;
  let keyId: string;

  before(async () => {
    server = await startTestService({ VIDEOGEN_WORKER_CONCURRENCY: '2', VIDEOGEN_ENGINES_FILE: enginesFile });
    const key = await server.newKey();
    api = new Api(server.url, key.key);
    keyId = key.id;
  });
  after(() => server.close());

  it('sums exactly the completed tasks: failed and cancelled tasks cost nothing', async () => {
    const completed = [];
    for (const duration of [4, 5, 6]) completed.push((await api.create(request(duration))).body);
    const failing = await api.create({
      model: 'videogen-2.0-fast-image-to-video',
      prompt: 'from a missing image',
      image_urls: ['http://127.0.0.1:9/missing.png'],
      duration: 7,
      quality: '480p',
    });
    assert.equal(failing.status, 200);
    const cancelled = await api.create(request(15));
    await api.request('POST', `/v1/tasks/${cancelled.body.id}/cancel`);
    for (const task of completed) assert.equal((await api.waitForFinal(task.id)).status, 'completed');
    assert.equal((await api.waitForFinal(failing.body.id)).status, 'failed');
    assert.equal((await api.waitForFinal(cancelled.body.id)).status, 'failed');

    const { status, body } = await api.request<UsageReport>('GET', '/v1/usage');
    assert.equal(status, 200);
    assert.equal(body.currency, 'USD');
    assert.deepEqual(body.totals, {
      tasks: 3,
      video_seconds: 15,
      cost: 0.75,
      reserved: { tasks: 0, video_seconds: 0, cost: 0 },
    });
    const today = new Date().toISOString().slice(0, 10);
    assert.deepEqual(
      body.data.map((bucket) => [bucket.key, bucket.video_seconds]),
      [[today, 15]],
    );
    const byModel = await api.request<UsageReport>('GET', '/v1/usage?group_by=model');
    assert.deepEqual(
      byModel.body.data.map((bucket) => [bucket.key, bucket.tasks, bucket.video_seconds, bucket.cost]),
      [[FAST, 3, 15, 0.75]],
    );
    const byKey = await api.request<UsageReport>('GET', '/v1/usage?group_by=api_key');
    assert.deepEqual(
      byKey.body.data.map((bucket) => bucket.key),
      [keyId],
    );
    const sdk = new VideogenClient({ apiKey: api.key ?? '', baseUrl: server.url });
    assert.deepEqual(await sdk.getUsage({ group_by: 'model' }), byModel.body);
    // A range before today holds nothing.
    const past = await api.request<UsageReport>('GET', '/v1/usage?start=0&end=86400');
    assert.deepEqual([past.body.start, past.body.end, past.body.data], [0, 86400, []]);

    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    assert.match(
      metrics,
      new RegExp(`videogen_video_seconds_total\\{model="${FAST}",engine="local"\\} 15\\n`),
    );
    assert.match(
      metrics,
      new RegExp(`videogen_cost_total\\{model="${FAST}",engine="local",currency="USD"\\} 0.75\\n`),
    );
  });

  it('refuses a bad range or grouping, naming the parameter', async () => {
    for (const [query, param] of [
      ['group_by=week', 'group_by'],
      ['start=soon', 'start'],
      ['start=100&end=100', 'end'],
      ['from=1', 'from'],
    ] as const) {
      const { status, body } = await api.request<ErrorBody>('GET', `/v1/usage?${query}`);
      assert.equal(status, 400, query);
      assert.equal(body.error.param, param);
    }
  });

  it("answers 402 budget_exceeded past a key's monthly limit, saying the limit, the use and the reset", async () => {
    const { accountId } = await server.newKey();
    const limited = api.withKey(await keyWithLimits(server.service.store, accountId, 10));
    assert.equal((await limited.create(request(5))).status, 200);
    assert.equal((await limited.create(request(5))).status, 200);
    const sdk = new VideogenClient({ apiKey: limited.key ?? '', baseUrl: server.url });
    await assert.rejects(
      sdk.createTask(request(4) as Parameters<typeof sdk.createTask>[0]),
      (error: unknown) =>
        error instanceof BudgetError && error.status === 402 && error.code === 'budget_exceeded',
    );
    const refused = await limited.create(request(4));
    assert.equal(refused.status, 402);
    const { code, type, message } = refused.body.error;
    assert.deepEqual([code, type], ['budget_exceeded', ERROR_STATUSES.budget_exceeded.type]);
    const now = new Date();
    const resets = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
    assert.equal(
      message,
      "This API key's monthly limit of 10 video seconds would be exceeded: 10 s used or reserved this month, " +
        `this task needs 4 s; the limit resets ${resets.slice(0, 19)}Z.`,
    );
  });

  it('20 concurrent creations against an account limit that allows 10 make exactly 10 tasks', async () => {
    const { accountId, key } = await server.newKey();
    await server.service.store.setAccountLimits(accountId, {
      monthlyVideoSeconds: 40,
      monthlyBudgetMicros: null,
    });
    assert.deepEqual(await twentyAtOnce([api.withKey(key)]), { created: 10, refused: 10 });
  });
});

describe('budgets across service instances sharing PostgreSQL', postgres, () => {
  const schema = freshSchemas();
  const servers: TestService[] = [];
  after(async () => {
    for (const server of servers.splice(0)) await server.close();
  });

  it('20 concurrent creations through 3 API instances against a limit that allows 10 make exactly 10', async () => {
    const shared = { VIDEOGEN_DATABASE_URL: TEST_DATABASE_URL, VIDEOGEN_DATABASE_SCHEMA: schema() };
    for (let i = 0; i < 3; i++) servers.push(await startTestService({ ...shared, VIDEOGEN_ROLE: 'api' }));
    const [first] = servers;
    assert.ok(first);
    const { accountId } = await first.newKey();
    const key = await keyWithLimits(first.service.store, accountId, 40);
    const apis = servers.map((server) => new Api(server.url, key));
    assert.deepEqual(await twentyAtOnce(apis), { created: 10, refused: 10 });
    const listed = await apis[1]?.request<{ data: unknown[] }>('GET', '/v1/tasks?limit=100');
    assert.equal(listed?.body.data.length, 10);
  });
});

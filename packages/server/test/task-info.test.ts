/**
 * The task object's `task_info` and `usage` (domain/task-info.ts) through real HTTP, tasks rendered by the local
 * engine at the engines file's prices: a completed task uses its duration and costs its price for it, exactly what
 * `GET /v1/usage` counts for it; a failed (cancelled) task uses and costs nothing; `can_cancel` holds until the
 * task is final and a cancel then fails; once a model has completed runs, `estimated_time` lies within the run
 * times the store recorded for them (claim to completion), in the answers and in the `processing` callback, whose
 * body carries the same fields as the task.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ModelId } from '../src/domain/models.js';
import { fromMicros, toMicros } from '../src/domain/prices.js';
import type { PublicTask } from '../src/domain/task.js';
import type { UsageReport } from '../src/domain/usage-report.js';
import { Api, type ErrorBody } from './helpers/api.js';
import { startTestService, type TestService } from './helpers/test-service.js';
import { startWebhookReceiver, type WebhookReceiver } from './helpers/webhook-receiver.js';

const FAST: ModelId = 'videogen-2.0-fast-text-to-video';
const STANDARD: ModelId = 'videogen-2.0-text-to-video';
/** Per second at 480p, as the engines file below says. */
const PRICES: ReadonlyMap<ModelId, number> = new Map([
  [FAST, 0.05],
  [STANDARD, 0.08],
]);

const request = (model: ModelId, duration: number, extra: Record<string, unknown> = {}) => ({
  model,
  prompt: 'a paper boat on a pond',
  duration,
  quality: '480p',
  ...extra,
});

/** What `seconds` of `model` at 480p cost, computed the way prices are kept: in micro-units. */
const costOf = (model: ModelId, seconds: number): number =>
  fromMicros(toMicros(PRICES.get(model) ?? Number.NaN) * seconds);

describe('task_info and usage on the task (SQLite, local engine, prices)', () => {
  let dir: string;
  let server: TestService;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'videogen-task-info-'));
    const enginesFile = join(dir, 'engines.yaml');
    await writeFile(
      enginesFile,
      `models:\n  ${FAST}: local\n  ${STANDARD}: local\n` +
        `prices:\n  currency: USD\n  models:\n    ${FAST}: { 480p: ${PRICES.get(FAST)} }\n` +
        `    ${STANDARD}: { 480p: ${PRICES.get(STANDARD)} }\n`,
    );
    // Run times read whenever asked (not kept for 30 s), so a figure follows the runs the test makes at once.
    server = await startTestService(
      { VIDEOGEN_WORKER_CONCURRENCY: '1', VIDEOGEN_ENGINES_FILE: enginesFile },
      { runTimeTtlMs: 0 },
    );
  });
  after(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** An API client with a key of an account of its own, so that its usage report is its tasks' alone. */
  async function freshApi(): Promise<Api> {
    return new Api(server.url, (await server.newKey()).key);
  }

  async function usageByModel(api: Api): Promise<UsageReport> {
    const answer = await api.request<UsageReport>('GET', '/v1/usage?group_by=model');
    assert.equal(answer.status, 200);
    return answer.body;
  }

  it('a completed task uses its duration and costs its price for it, as GET /v1/usage counts it', async () => {
    const api = await freshApi();
    const created = await api.create(request(FAST, 4));
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(created.body.task_info.can_cancel, true);
    assert.equal(created.body.task_info.video_duration, 4);
    assert.deepEqual(created.body.usage, { video_seconds: 4, cost: costOf(FAST, 4), currency: 'USD' });

    const done = await api.waitForFinal(created.body.id);
    assert.equal(done.status, 'completed');
    assert.deepEqual(done.task_info, { can_cancel: false, video_duration: 4 });
    assert.deepEqual(done.usage, { video_seconds: 4, cost: costOf(FAST, 4), currency: 'USD' });

    const report = await usageByModel(api);
    const bucket = report.data.find((entry) => entry.key === FAST);
    assert.ok(bucket, JSON.stringify(report));
    assert.deepEqual(
      { video_seconds: bucket.video_seconds, cost: bucket.cost, currency: report.currency },
      done.usage,
    );
    assert.equal(bucket.tasks, 1);

    const refused = await api.request<ErrorBody>('POST', `/v1/tasks/${done.id}/cancel`);
    assert.equal(refused.status, 409, 'can_cancel false: a cancel fails');
  });

  it('a failed task uses nothing and costs nothing; a model without prices has no cost', async () => {
    const api = await freshApi();
    const created = await api.create(request(STANDARD, 6));
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(created.body.task_info.can_cancel, true, 'can_cancel true: the cancel below succeeds');
    assert.deepEqual(created.body.usage, { video_seconds: 6, cost: costOf(STANDARD, 6), currency: 'USD' });

    const cancelled = await api.request<PublicTask>('POST', `/v1/tasks/${created.body.id}/cancel`);
    assert.equal(cancelled.status, 200);
    assert.equal(cancelled.body.status, 'failed');
    assert.deepEqual(cancelled.body.task_info, { can_cancel: false, video_duration: 6 });
    assert.deepEqual(cancelled.body.usage, { video_seconds: 0, cost: 0, currency: 'USD' });
    assert.deepEqual((await api.get(created.body.id)).body.usage, cancelled.body.usage);
    const report = await usageByModel(api);
    assert.deepEqual(
      [report.totals.video_seconds, report.totals.cost, report.totals.reserved.video_seconds],
      [0, 0, 0],
      'GET /v1/usage counts nothing for it either',
    );

    // The prices cover 480p only: a 720p task has no known cost (and GET /v1/usage counts none for it).
    const unpriced = await api.create(request(STANDARD, 5, { quality: '720p' }));
    assert.equal(unpriced.status, 200, JSON.stringify(unpriced.body));
    assert.deepEqual(unpriced.body.usage, { video_seconds: 5 });
    assert.equal((await api.request('POST', `/v1/tasks/${unpriced.body.id}/cancel`)).status, 200);
  });

  describe('estimated_time', () => {
    let receiver: WebhookReceiver;
    before(async () => {
      receiver = await startWebhookReceiver();
    });
    after(() => receiver.close());

    it("lies within the model's recorded run times, in the answer and in the processing callback", async () => {
      const api = await freshApi();
      const first = await api.create(request(STANDARD, 4));
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.equal(
        first.body.task_info.estimated_time,
        undefined,
        'no completed run of the model yet: no estimate',
      );
      const ids = [first.body.id];
      await api.waitForFinal(first.body.id);
      for (let i = 0; i < 2; i++) {
        const next = await api.create(request(STANDARD, 4));
        ids.push(next.body.id);
        assert.equal((await api.waitForFinal(next.body.id)).status, 'completed');
      }

      const probe = await api.create(request(STANDARD, 4, { callback_url: `${receiver.url}/hook` }));
      assert.equal(probe.status, 200, JSON.stringify(probe.body));
      ids.push(probe.body.id);
      const final = await api.waitForFinal(probe.body.id);
      assert.equal(final.status, 'completed');
      const [processing, completed] = (await receiver.waitFor(2)).map(
        (webhook) => JSON.parse(webhook.body) as PublicTask,
      );

      // The runs as the store recorded them: every figure shown was a median of some of them.
      const runs: number[] = [];
      for (const id of ids) {
        const task = await server.service.store.getTask(id);
        assert.ok(task?.startedAt && task.completedAt, `task ${id} ran`);
        runs.push(task.completedAt - task.startedAt);
      }
      const low = Math.max(1, Math.floor(Math.min(...runs) / 1000));
      const high = Math.max(1, Math.ceil(Math.max(...runs) / 1000));
      const within = (seconds: number | undefined, what: string) => {
        assert.ok(
          seconds !== undefined && seconds >= low && seconds <= high,
          `${what}: ${seconds} s, runs of ${runs.join(', ')} ms`,
        );
      };
      assert.equal(probe.body.status, 'pending');
      within(probe.body.task_info.estimated_time, 'the creation answer');

      assert.ok(processing && completed);
      assert.equal(processing.status, 'processing');
      assert.equal(processing.task_info.can_cancel, true);
      within(processing.task_info.estimated_time, 'the processing callback');
      assert.deepEqual(processing.usage, { video_seconds: 4, cost: costOf(STANDARD, 4), currency: 'USD' });
      assert.equal(completed.status, 'completed');
      assert.deepEqual(completed.task_info, final.task_info);
      assert.deepEqual(completed.usage, final.usage);
      assert.deepEqual(final.task_info, { can_cancel: false, video_duration: 4 });
    });
  });
});

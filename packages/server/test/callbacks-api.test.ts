/**
 * Callbacks through the whole service: a real task rendered by the local engine calls a receiver on
 * 127.0.0.1, whose every request is verified with the `standardwebhooks` library; the delivery log and
 * redelivery endpoints; and the 4xx answers that belong to them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import type { PublicDelivery } from '../src/domain/delivery.js';
import type { PublicTask } from '../src/domain/task.js';
import { Api, type ErrorBody } from './helpers/api.js';
import { startTestService, type TestService } from './helpers/test-service.js';
import { until } from './helpers/until.js';
import {
  type ReceivedWebhook,
  startWebhookReceiver,
  type WebhookReceiver,
} from './helpers/webhook-receiver.js';

const FAST = { model: 'videogen-2.0-fast-text-to-video', prompt: 'a red kite', duration: 5, quality: '480p' };

let server: TestService;
let hook: WebhookReceiver;
let api: Api;
let secret: string;
let completedTask: PublicTask;

interface DeliveryList {
  object: 'list';
  data: PublicDelivery[];
}

function verify(webhook: ReceivedWebhook): PublicTask {
  return new Webhook(secret).verify(webhook.body, {
    'webhook-id': String(webhook.headers['webhook-id']),
    'webhook-timestamp': String(webhook.headers['webhook-timestamp']),
    'webhook-signature': String(webhook.headers['webhook-signature']),
  }) as PublicTask;
}

async function settledDeliveries(taskId: string, count: number): Promise<PublicDelivery[]> {
  return until(
    async () => {
      const { status, body } = await api.request<DeliveryList>('GET', `/v1/tasks/${taskId}/deliveries`);
      assert.equal(status, 200);
      return body.data.length >= count && body.data.every((d) => d.status !== 'pending')
        ? body.data
        : undefined;
    },
    `${count} settled deliveries of ${taskId}`,
    { intervalMs: 50 },
  );
}

before(async () => {
  server = await startTestService({ VIDEOGEN_WORKER_CONCURRENCY: '1' });
  hook = await startWebhookReceiver();
  const created = await server.newKey();
  api = new Api(server.url, created.key);
  const [current] = await server.service.store.getWebhookSecrets(created.accountId);
  assert.ok(current);
  secret = current.secret;
});
after(async () => {
  await server.close();
  await hook.close();
});

describe('callbacks', () => {
  it('calls callback_url at processing and completed with the task exactly as GET returns it', async () => {
    const { status, body } = await api.create({ ...FAST, callback_url: `${hook.url}/done` });
    assert.equal(status, 200);
    const final = await api.waitForFinal(body.id);
    assert.equal(final.status, 'completed');
    const [processing, completed] = await hook.waitFor(2, 15_000);
    assert.ok(processing && completed);
    const statuses = [verify(processing).status, verify(completed).status].sort();
    assert.deepEqual(statuses, ['completed', 'processing']);
    const completedHook = verify(completed).status === 'completed' ? completed : processing;
    completedTask = (await api.get(body.id)).body;
    assert.deepEqual(JSON.parse(completedHook.body), completedTask);
    const video = await fetch(completedTask.results?.[0] ?? '');
    assert.equal(video.status, 200, 'the result link in the callback works');
    await video.arrayBuffer();
  });

  it('keeps every attempt in the delivery log', async () => {
    const deliveries = await settledDeliveries(completedTask.id, 2);
    assert.deepEqual(
      deliveries.map((d) => [d.object, d.task_id, d.event, d.status, d.url, d.attempts.length]),
      [
        ['webhook.delivery', completedTask.id, 'task.processing', 'succeeded', `${hook.url}/done`, 1],
        ['webhook.delivery', completedTask.id, 'task.completed', 'succeeded', `${hook.url}/done`, 1],
      ],
    );
    const ids = new Set(hook.received.slice(0, 2).map((w) => w.headers['webhook-id']));
    assert.deepEqual(new Set(deliveries.map((d) => d.id)), ids);
    for (const delivery of deliveries) {
      const [attempt] = delivery.attempts;
      assert.equal(attempt?.http_status, 200);
      assert.equal(attempt?.error, undefined);
      assert.ok(typeof attempt?.duration_ms === 'number' && attempt.duration_ms >= 0);
      assert.ok(Math.abs((attempt?.attempted_at ?? 0) - Date.now() / 1000) < 60);
      assert.equal(delivery.next_attempt_at, undefined);
    }
  });

  it('redelivers the latest state as a new message', async () => {
    const { status, body } = await api.request<PublicDelivery>(
      'POST',
      `/v1/tasks/${completedTask.id}/deliveries/redeliver`,
    );
    assert.equal(status, 202);
    assert.equal(body.event, 'task.completed');
    assert.equal(body.status, 'pending');
    assert.deepEqual(body.attempts, []);
    const [, , again] = await hook.waitFor(3);
    assert.ok(again);
    assert.equal(again.headers['webhook-id'], body.id);
    assert.ok(!hook.received.slice(0, 2).some((w) => w.headers['webhook-id'] === body.id));
    assert.deepEqual(verify(again), (await api.get(completedTask.id)).body);
    const deliveries = await settledDeliveries(completedTask.id, 3);
    assert.equal(deliveries[2]?.id, body.id);
    assert.equal(deliveries[2]?.status, 'succeeded');
  });

  it('answers 409 callback_not_configured for a task without callback_url', async () => {
    const { body: task } = await api.create(FAST);
    const { status, body } = await api.request<ErrorBody>(
      'POST',
      `/v1/tasks/${task.id}/deliveries/redeliver`,
    );
    assert.equal(status, 409);
    assert.equal(body.error.code, 'callback_not_configured');
    assert.equal(body.error.type, 'conflict_error');
    const list = await api.request<DeliveryList>('GET', `/v1/tasks/${task.id}/deliveries`);
    assert.deepEqual(list.body, { object: 'list', data: [] });
  });

  it('answers 404 for another account and 401 without a key', async () => {
    const other = api.withKey((await server.newKey()).key);
    for (const [method, path] of [
      ['GET', `/v1/tasks/${completedTask.id}/deliveries`],
      ['POST', `/v1/tasks/${completedTask.id}/deliveries/redeliver`],
    ] as const) {
      const notFound = await other.request<ErrorBody>(method, path);
      assert.equal(notFound.status, 404);
      assert.equal(notFound.body.error.code, 'task_not_found');
      const anonymous = await api.withKey(undefined).request<ErrorBody>(method, path);
      assert.equal(anonymous.status, 401);
    }
  });

  it('refuses at creation a callback_url that is not http(s), has credentials or is too long', async () => {
    const before = hook.received.length;
    for (const callback_url of [
      'ftp://example.com/hook',
      'javascript:alert(1)',
      'https://user:secret@example.com/hook',
      'https://example.com/hook?x=1#frag'.padEnd(2049, 'a'),
      'not a url',
    ]) {
      const { status, body } = await api.create({ ...FAST, callback_url });
      assert.equal(status, 400, callback_url);
      assert.equal((body as ErrorBody).error.code, 'invalid_parameter');
      assert.equal((body as ErrorBody).error.param, 'callback_url');
    }
    assert.equal(hook.received.length, before);
  });
});

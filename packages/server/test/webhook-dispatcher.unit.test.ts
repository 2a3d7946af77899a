/**
 * Callback delivery against real receivers on 127.0.0.1: every signature is checked with the `standardwebhooks`
 * library, and retries, 410, timeouts, Retry-After, per-host limits, rotation, shutdown and the outbound
 * address policy are each shown by what the receiver got and what the delivery log kept.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { pino } from 'pino';
import { Webhook } from 'standardwebhooks';
import { Agent, type Dispatcher } from 'undici';
import { type DeliveryRecord, type DeliveryWithAttempts, deliveryFor } from '../src/domain/delivery.js';
import { newTaskId } from '../src/domain/identifiers.js';
import { type TaskRecord, type TaskScope, toPublicTask } from '../src/domain/task.js';
import { createGuardedDispatcher } from '../src/outbound/guarded-dispatcher.js';
import type { Claim } from '../src/ports/store.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { VERSION } from '../src/version.js';
import type { RetryPolicy } from '../src/webhooks/retry-policy.js';
import { WebhookDispatcher, type WebhookDispatcherOptions } from '../src/webhooks/webhook-dispatcher.js';
import { generationParams } from './helpers/generation-params.js';
import { until } from './helpers/until.js';
import {
  type ReceivedWebhook,
  type Respond,
  startWebhookReceiver,
  type WebhookReceiver,
} from './helpers/webhook-receiver.js';

const PARAMS = generationParams({ prompt: 'a kite over the dunes', seed: 42 });
const FAST_RETRIES: RetryPolicy = { delaysMs: [50, 50, 50], jitter: 0 };
const resultUrlOf = (taskId: string) => `https://videos.example.com/v1/results/${taskId}.mp4?signature=x`;
const resultUrl = async (taskId: string) => resultUrlOf(taskId);

let store: SqliteStore;
let scope: TaskScope;
const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  for (const cleanUp of cleanups.splice(0).reverse()) await cleanUp();
});

async function setUp(
  setup: Partial<WebhookDispatcherOptions> & { allowPrivateNetworks?: boolean; storeNow?: () => number } = {},
): Promise<WebhookDispatcher> {
  const { storeNow, ...options } = setup;
  store = new SqliteStore({ path: ':memory:', ...(storeNow ? { now: storeNow } : {}) });
  await store.migrate();
  scope = { accountId: (await store.createAccount()).id, environment: 'development' };
  const dispatcher: Dispatcher =
    options.allowPrivateNetworks === false
      ? createGuardedDispatcher({ allowPrivateNetworks: false })
      : new Agent();
  const webhooks = new WebhookDispatcher({
    store,
    dispatcher,
    logger: pino({ level: 'silent' }),
    resultUrl,
    pollIntervalMs: 20,
    retry: FAST_RETRIES,
    ...options,
  });
  cleanups.push(
    () => store.close(),
    () => dispatcher.close(),
    () => webhooks.stop(0),
  );
  return webhooks;
}

async function receiver(respond?: Respond): Promise<WebhookReceiver> {
  const started = await startWebhookReceiver(respond);
  cleanups.push(() => started.close());
  return started;
}

async function taskCalling(url: string): Promise<TaskRecord> {
  return store.createTask({
    ...scope,
    id: newTaskId(),
    model: 'videogen-2.0-text-to-video',
    params: { ...PARAMS, callback_url: url },
  });
}

/** Queues a delivery of the task as it is (what a redelivery does). */
async function queue(task: TaskRecord): Promise<string> {
  const delivery = deliveryFor(task);
  assert.ok(delivery);
  return (await store.createDelivery(delivery)).id;
}

async function secrets(): Promise<string[]> {
  return (await store.getWebhookSecrets(scope.accountId)).map((s) => s.secret);
}

/** Verifies with the standardwebhooks library (throws when the signature is wrong) and returns the body. */
function verified(webhook: ReceivedWebhook, secret: string): unknown {
  const headers = {
    'webhook-id': String(webhook.headers['webhook-id']),
    'webhook-timestamp': String(webhook.headers['webhook-timestamp']),
    'webhook-signature': String(webhook.headers['webhook-signature']),
  };
  return new Webhook(secret).verify(webhook.body, headers);
}

async function deliveriesOf(taskId: string): Promise<DeliveryWithAttempts[]> {
  return store.listDeliveries(taskId);
}

async function settled(taskId: string, count = 1): Promise<DeliveryWithAttempts[]> {
  return until(
    async () => {
      const list = await deliveriesOf(taskId);
      return list.length >= count && list.every((d) => d.status !== 'pending') ? list : undefined;
    },
    `${count} settled deliveries of ${taskId}`,
    { intervalMs: 20 },
  );
}

/**
 * Waits for the dispatcher's next claim and says what it found. Nothing in flight and nothing claimed: the
 * dispatcher has nothing it could send, now or later, until a delivery is queued or falls due.
 */
async function nextClaim(webhooks: WebhookDispatcher): Promise<DeliveryRecord[]> {
  // An attempt leaves the in-flight set just after its outcome is recorded.
  await until(() => webhooks.inFlight === 0, 'the attempts ending');
  const claims: DeliveryRecord[][] = [];
  const claim = store.claimDeliveries.bind(store);
  store.claimDeliveries = async (options) => {
    const claimed = await claim(options);
    claims.push(claimed);
    return claimed;
  };
  const [claimed] = await until(() => (claims.length > 0 ? claims : undefined), 'the next claim');
  assert.equal(webhooks.inFlight, 0, 'no attempt started since');
  return claimed ?? [];
}

describe('WebhookDispatcher', () => {
  it('sends processing and completed, signed, with the task as GET shows it', async () => {
    const webhooks = await setUp();
    const hook = await receiver();
    const task = await taskCalling(`${hook.url}/hooks?source=videogen`);
    webhooks.start();
    const claimed = await store.claimTask({ workerId: 'w', leaseMs: 30_000, maxAttempts: 3 });
    assert.ok(claimed);
    webhooks.notify();
    const claim: Claim = { taskId: task.id, attempt: claimed.attempts, workerId: 'w' };
    assert.equal(await store.reportProgress(claim, 40), true);
    assert.equal(await store.completeTask(claim, 'results/x.mp4'), true);
    webhooks.notify();

    const [processing, completed] = await hook.waitFor(2);
    assert.ok(processing && completed);
    const secret = (await secrets())[0] ?? assert.fail('the account has a secret');
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    const final = await store.getTask(task.id);
    assert.ok(final);
    const bodies = [processing, completed].map((w) => verified(w, secret) as { status: string });
    const byStatus = new Map(bodies.map((body, i) => [body.status, [processing, completed][i]!]));
    assert.deepEqual(JSON.parse(byStatus.get('completed')!.body), toPublicTask(final, resultUrlOf(task.id)));
    assert.deepEqual(JSON.parse(byStatus.get('processing')!.body), toPublicTask(claimed, undefined));
    for (const webhook of [processing, completed]) {
      assert.equal(webhook.path, '/hooks?source=videogen');
      assert.equal(webhook.headers['content-type'], 'application/json');
      assert.equal(webhook.headers['user-agent'], `videogen/${VERSION} (webhooks)`);
      assert.match(String(webhook.headers['webhook-id']), /^msg_[0-9A-Za-z]{24}$/);
      assert.ok(Math.abs(Number(webhook.headers['webhook-timestamp']) - Date.now() / 1000) < 10);
    }

    const log = await settled(task.id, 2);
    assert.deepEqual(
      log.map((d) => [d.event, d.status, d.attempts.map((a) => a.httpStatus)]),
      [
        ['task.processing', 'succeeded', [200]],
        ['task.completed', 'succeeded', [200]],
      ],
    );
    assert.deepEqual(
      new Set(log.map((d) => d.id)),
      new Set([processing.headers['webhook-id'], completed.headers['webhook-id']]),
    );
  });

  it('retries a receiver that fails twice, with the same webhook-id, until it succeeds', async () => {
    const webhooks = await setUp();
    const hook = await receiver((_, i) => ({ status: [500, 503][i] ?? 204 }));
    const task = await taskCalling(hook.url);
    const id = await queue(task);
    webhooks.start();
    const received = await hook.waitFor(3);
    const [secret] = await secrets();
    for (const webhook of received) {
      assert.equal(webhook.headers['webhook-id'], id);
      verified(webhook, secret!);
    }
    const [delivery] = await settled(task.id);
    assert.equal(delivery?.status, 'succeeded');
    assert.deepEqual(
      delivery?.attempts.map((a) => [a.number, a.httpStatus, a.error]),
      [
        [1, 500, null],
        [2, 503, null],
        [3, 204, null],
      ],
    );
    for (const attempt of delivery?.attempts ?? [])
      assert.ok(attempt.durationMs >= 0 && attempt.attemptedAt > 0);
    assert.deepEqual(await nextClaim(webhooks), [], 'a delivered callback is not claimed again');
    assert.equal(hook.received.length, 3, 'nothing after the success');
  });

  it('retries 3xx and 4xx, and gives up when the schedule ends', async () => {
    const webhooks = await setUp();
    const hook = await receiver((_, i) => ({
      status: [301, 404, 429][i] ?? 500,
      headers: { location: '/elsewhere' },
    }));
    const task = await taskCalling(hook.url);
    await queue(task);
    webhooks.start();
    const [delivery] = await settled(task.id);
    assert.equal(delivery?.status, 'failed');
    assert.deepEqual(
      delivery?.attempts.map((a) => a.httpStatus),
      [301, 404, 429, 500],
      'the first try and one per scheduled delay; the redirect is not followed',
    );
    assert.ok(hook.received.every((w) => w.path === '/'));
  });

  it('stops at 410 Gone', async () => {
    const webhooks = await setUp();
    const hook = await receiver(() => ({ status: 410 }));
    const task = await taskCalling(hook.url);
    await queue(task);
    webhooks.start();
    const [delivery] = await settled(task.id);
    assert.equal(delivery?.status, 'failed');
    assert.deepEqual(
      delivery?.attempts.map((a) => a.httpStatus),
      [410],
    );
    assert.deepEqual(await nextClaim(webhooks), [], 'a callback given up on is not claimed again');
    assert.equal(hook.received.length, 1);
  });

  it('times out a receiver that does not answer, and tries again', async () => {
    // 2 s: the second attempt, which must succeed, is bound by it too, on a machine however loaded.
    const webhooks = await setUp({ timeoutMs: 2000, retry: { delaysMs: [50], jitter: 0 } });
    const hook = await receiver((_, i) => (i === 0 ? { status: 200, hang: true } : { status: 200 }));
    const task = await taskCalling(hook.url);
    await queue(task);
    webhooks.start();
    const [delivery] = await settled(task.id);
    assert.equal(delivery?.status, 'succeeded');
    const [timedOut, ok] = delivery?.attempts ?? [];
    assert.equal(timedOut?.httpStatus, null);
    assert.equal(timedOut?.error, 'no response within 2 s');
    // The receiver never answers: only the 2 s limit ends the attempt (a bound far from any machine's speed).
    assert.ok((timedOut?.durationMs ?? 0) >= 1990 && (timedOut?.durationMs ?? 0) < 30_000);
    assert.equal(ok?.httpStatus, 200);
  });

  it('records a connection error and retries it', async () => {
    const webhooks = await setUp({ retry: { delaysMs: [20], jitter: 0 } });
    const closed = await startWebhookReceiver();
    const url = closed.url;
    await closed.close();
    const task = await taskCalling(url);
    await queue(task);
    webhooks.start();
    const [delivery] = await settled(task.id);
    assert.equal(delivery?.status, 'failed');
    assert.equal(delivery?.attempts.length, 2);
    for (const attempt of delivery?.attempts ?? []) assert.match(attempt.error ?? '', /^ECONNREFUSED/);
  });

  it('waits as long as Retry-After asks', async () => {
    const webhooks = await setUp({ retry: { delaysMs: [10], jitter: 0 } });
    const hook = await receiver((_, i) =>
      i === 0 ? { status: 503, headers: { 'retry-after': '1' } } : { status: 200 },
    );
    const task = await taskCalling(hook.url);
    await queue(task);
    webhooks.start();
    const [first, second] = await hook.waitFor(2);
    assert.ok(first && second);
    assert.ok(second.at - first.at >= 950, `retried after ${Math.round(second.at - first.at)} ms, not 1 s`);
  });

  it('keeps a hanging receiver to its own slots: other receivers are not delayed', async () => {
    // Held up behind the hanging receiver, the others would wait for its attempts' 10-minute limit.
    const webhooks = await setUp({ perHostConcurrency: 2, concurrency: 8, timeoutMs: 600_000 });
    const slow = await receiver(() => ({ status: 200, hang: true }));
    const fast = await receiver();
    const slowTask = await taskCalling(slow.url);
    const fastTask = await taskCalling(fast.url);
    for (let i = 0; i < 6; i++) await queue(slowTask);
    for (let i = 0; i < 6; i++) await queue(fastTask);
    webhooks.start();
    await fast.waitFor(6, 60_000);
    assert.equal(slow.peakOpen, 2, 'at most two requests to one host at once');
    assert.equal(slow.open, 2);
  });

  it('signs with both secrets during a rotation', async () => {
    const webhooks = await setUp();
    const hook = await receiver();
    const [old] = await secrets();
    const rotated = await store.rotateWebhookSecret(scope.accountId, 60_000);
    const task = await taskCalling(hook.url);
    await queue(task);
    webhooks.start();
    const [webhook] = await hook.waitFor(1);
    assert.ok(webhook && old);
    assert.notEqual(rotated.secret, old);
    assert.equal(String(webhook.headers['webhook-signature']).split(' ').length, 2);
    verified(webhook, old);
    verified(webhook, rotated.secret);
    assert.throws(() => verified(webhook, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'));
  });

  it('hands back, uncounted, an attempt cut off by shutdown', async () => {
    // The receiver never answers and the attempt's own limit is far off: only the shutdown ends it.
    const webhooks = await setUp({ timeoutMs: 600_000 });
    const hook = await receiver(() => ({ status: 200, hang: true }));
    const task = await taskCalling(hook.url);
    await queue(task);
    webhooks.start();
    await hook.waitFor(1);
    await webhooks.stop(100);
    const [delivery] = await deliveriesOf(task.id);
    assert.equal(delivery?.status, 'pending');
    assert.equal(delivery?.attemptCount, 0);
    assert.deepEqual(delivery?.attempts, []);
    assert.ok((delivery?.nextAttemptAt ?? Infinity) <= Date.now());
  });

  it('sends again a delivery whose outcome was not committed when the sender died', async () => {
    // The store's clock runs ahead by hand, past the dead sender's lease, instead of waiting for it.
    let skew = 0;
    const crashed = await setUp({ storeNow: () => Date.now() + skew });
    const hook = await receiver();
    const task = await taskCalling(hook.url);
    const id = await queue(task);
    // The process dies after the request but before the group with its outcome commits.
    const record = store.finishDeliveryAttempts.bind(store);
    let recording: (() => void) | undefined;
    const dies = new Promise<boolean[]>((_, reject) => {
      recording = () => reject(new Error('the process died'));
    });
    let committing: () => void = () => {};
    const committed = new Promise<void>((resolve) => {
      committing = resolve;
    });
    store.finishDeliveryAttempts = () => {
      committing();
      return dies;
    };
    cleanups.push(async () => recording?.());
    crashed.start();
    const [first] = await hook.waitFor(1);
    assert.equal(first?.headers['webhook-id'], id);
    await committed;
    void crashed.stop(60_000);
    const [pending] = await deliveriesOf(task.id);
    assert.equal(pending?.status, 'pending', 'nothing recorded');
    assert.deepEqual(pending?.attempts, []);

    store.finishDeliveryAttempts = record;
    skew = 10 * 60_000;
    const restarted = new WebhookDispatcher({
      store,
      dispatcher: new Agent(),
      logger: pino({ level: 'silent' }),
      resultUrl,
      pollIntervalMs: 20,
      retry: FAST_RETRIES,
    });
    cleanups.push(() => restarted.stop(0));
    restarted.start();
    const [, second] = await hook.waitFor(2);
    assert.equal(second?.headers['webhook-id'], id, 'the same message again');
    const [delivery] = await settled(task.id);
    assert.equal(delivery?.status, 'succeeded');
    assert.deepEqual(
      delivery?.attempts.map((a) => [a.number, a.httpStatus]),
      [[2, 200]],
      'the lost attempt counted by its claim, the second recorded',
    );
  });

  it('hands back, uncounted, deliveries claimed but not started when it stops', async () => {
    const webhooks = await setUp({ perHostConcurrency: 1, timeoutMs: 600_000 });
    const hook = await receiver(() => ({ status: 200, hang: true }));
    const task = await taskCalling(hook.url);
    for (let i = 0; i < 3; i++) await queue(task);
    webhooks.start();
    await hook.waitFor(1);
    await webhooks.stop(100);
    const deliveries = await deliveriesOf(task.id);
    assert.equal(deliveries.length, 3);
    for (const delivery of deliveries) {
      assert.equal(delivery.status, 'pending');
      assert.equal(delivery.attemptCount, 0);
      assert.ok((delivery.nextAttemptAt ?? Infinity) <= Date.now());
    }
    assert.equal(hook.received.length, 1, 'one sent (then cut off), two never');
  });

  describe('outbound address policy', () => {
    it('refuses every non-public destination by default and sends nothing', async () => {
      const webhooks = await setUp({ allowPrivateNetworks: false });
      const hook = await receiver();
      const port = new URL(hook.url).port;
      const targets = [
        `http://127.0.0.1:${port}/`,
        'http://10.0.0.1/',
        'http://169.254.169.254/latest/meta-data/',
        `http://[::1]:${port}/`,
        `http://[::ffff:127.0.0.1]:${port}/`,
        `http://localhost:${port}/`,
      ];
      const tasks = await Promise.all(targets.map((url) => taskCalling(url)));
      for (const task of tasks) await queue(task);
      webhooks.start();
      for (const [i, task] of tasks.entries()) {
        const [delivery] = await settled(task.id);
        assert.equal(delivery?.status, 'failed', targets[i]);
        assert.equal(delivery?.attempts.length, 1, `${targets[i]}: not retried`);
        assert.match(
          delivery?.attempts[0]?.error ?? '',
          /^address \S+ .*is not public \(.*VIDEOGEN_ALLOW_PRIVATE_NETWORKS=true\)$/,
          targets[i],
        );
      }
      assert.equal(hook.received.length, 0);
    });
  });
});

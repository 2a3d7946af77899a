/**
 * The callback (webhook) behaviour every `Store` must have: per-account signing secrets and their rotation, the
 * outbox that status changes fill in the same transaction, and the claiming, fencing and logging of delivery
 * attempts. Called from `storeConformance`, with the same `open`: an empty store of the test's own reading
 * `clock.now`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type DeliveryAttempt,
  type DeliveryRecord,
  type DeliveryWithAttempts,
  deliveryFor,
  type NewDelivery,
} from '../src/domain/delivery.js';
import type { GenerationParams } from '../src/domain/generation-request.js';
import { newId, newTaskId } from '../src/domain/identifiers.js';
import type { ModelId } from '../src/domain/models.js';
import { type TaskError, type TaskRecord, type TaskScope, toPublicTask } from '../src/domain/task.js';
import type { Claim, DeliveryClaim, DeliveryClaimOptions, Store } from '../src/ports/store.js';
import { type Clock, storeHarness, T0 } from './helpers/store-harness.js';

const LEASE = 30_000;
/** The lease of a delivery claim: a sender's attempt. */
const SEND_LEASE = 25_000;
const TEXT: ModelId = 'videogen-2.0-text-to-video';

const CALLBACK_URL = 'https://hooks.example.com/videogen';
const CALLBACK_HOST = 'hooks.example.com';
/** Another receiver, its host written in capitals and with a port: the host is kept as `host:port`, lower case. */
const OTHER_URL = 'http://Receiver.Example.ORG:8080/cb?task=1&x=%20';
const OTHER_HOST = 'receiver.example.org:8080';

const PARAMS: GenerationParams = {
  prompt: 'A lighthouse at dusk, "quoted" and ünïcödé ✓',
  image_urls: ['https://example.com/a.png'],
  video_urls: [],
  audio_urls: [],
  duration: 10,
  quality: '1080p',
  aspect_ratio: '16:9',
  seed: 4294967295,
  callback_url: CALLBACK_URL,
  generate_audio: false,
};
const NO_CALLBACK: GenerationParams = { ...PARAMS, callback_url: null };

/** Standard Webhooks: `whsec_` and the base64 of 32 random bytes. */
const WHSEC = /^whsec_[A-Za-z0-9+/]{43}=$/;
const MESSAGE_ID = /^msg_[0-9A-Za-z]{24}$/;

const seconds = (ms: number): number => Math.floor(ms / 1000);

/** Delivery ids that sort in the opposite order from their creation, so ordering by id cannot pass for FIFO. */
function descendingDeliveryIds(count: number): string[] {
  return Array.from({ length: count }, () => newId('msg')).sort((a, b) => (a < b ? 1 : -1));
}

function claimOf(task: TaskRecord): Claim {
  assert.ok(task.leaseOwner, 'a claimed task has a lease owner');
  return { taskId: task.id, attempt: task.attempts, workerId: task.leaseOwner };
}

function deliveryClaimOf(delivery: DeliveryRecord, workerId: string): DeliveryClaim {
  return { deliveryId: delivery.id, attempt: delivery.attemptCount, workerId };
}

/** A new delivery of `task` as it is now (a redelivery), optionally with a chosen id. */
function newDelivery(task: TaskRecord, id?: string): NewDelivery {
  const delivery = deliveryFor(task);
  assert.ok(delivery, `task ${task.id} has a callback_url`);
  return id === undefined ? delivery : { ...delivery, id };
}

function withoutAttempts(delivery: DeliveryWithAttempts): DeliveryRecord {
  const { attempts: _, ...record } = delivery;
  return record;
}

export function deliveryStoreConformance(name: string, open: (clock: Clock) => Promise<Store>): void {
  const withStore = storeHarness(open);

  async function newScope(store: Store): Promise<TaskScope> {
    return { accountId: (await store.createAccount()).id, environment: 'production' };
  }

  async function addTask(store: Store, scope: TaskScope, params: GenerationParams = PARAMS) {
    return store.createTask({ ...scope, id: newTaskId(), model: TEXT, params });
  }

  async function claim(store: Store, workerId = 'worker-1', maxAttempts = 3): Promise<TaskRecord> {
    const task = await store.claimTask({ workerId, leaseMs: LEASE, maxAttempts });
    assert.ok(task, `${workerId} claimed a task`);
    return task;
  }

  async function mustGet(store: Store, id: string): Promise<TaskRecord> {
    const task = await store.getTask(id);
    assert.ok(task, `task ${id} exists`);
    return task;
  }

  function claimDue(store: Store, options: Partial<DeliveryClaimOptions> = {}): Promise<DeliveryRecord[]> {
    return store.claimDeliveries({
      workerId: 'sender-1',
      leaseMs: SEND_LEASE,
      limit: 10,
      excludeHosts: [],
      ...options,
    });
  }

  async function claimOne(store: Store, workerId = 'sender-1'): Promise<DeliveryRecord> {
    const [delivery, ...rest] = await claimDue(store, { workerId, limit: 1 });
    assert.ok(delivery, `${workerId} claimed a delivery`);
    assert.equal(rest.length, 0);
    return delivery;
  }

  async function deliveries(store: Store, taskId: string): Promise<DeliveryWithAttempts[]> {
    return store.listDeliveries(taskId);
  }

  async function events(store: Store, taskId: string): Promise<string[]> {
    return (await deliveries(store, taskId)).map((delivery) => delivery.event);
  }

  async function onlyDelivery(store: Store, taskId: string): Promise<DeliveryWithAttempts> {
    const [delivery, ...rest] = await deliveries(store, taskId);
    assert.ok(delivery, `task ${taskId} has a delivery`);
    assert.equal(rest.length, 0, `task ${taskId} has one delivery`);
    return delivery;
  }

  /** The delivery a status change must queue: `task` as it is after the change, due at once. */
  function expectedDelivery(
    delivery: DeliveryWithAttempts,
    task: TaskRecord,
    at: number,
    url = CALLBACK_URL,
    host = CALLBACK_HOST,
  ): DeliveryWithAttempts {
    return {
      id: delivery.id,
      taskId: task.id,
      accountId: task.accountId,
      event: `task.${task.status}`,
      url,
      host,
      payload: toPublicTask(task, undefined),
      status: 'pending',
      attemptCount: 0,
      nextAttemptAt: at,
      createdAt: at,
      updatedAt: at,
      attempts: [],
    };
  }

  /** A task with a callback, claimed (so it has its `task.processing` delivery), and that delivery. */
  async function processingDelivery(store: Store, scope: TaskScope, params = PARAMS) {
    await addTask(store, scope, params);
    const task = await claim(store);
    return { task, delivery: await onlyDelivery(store, task.id) };
  }

  const attempt = (
    attemptedAt: number,
    httpStatus: number | null,
    error: string | null = null,
    durationMs = 120,
  ): Omit<DeliveryAttempt, 'number'> => ({ attemptedAt, durationMs, httpStatus, error });

  describe(`Callback conformance: ${name}`, () => {
    describe('webhook secrets', () => {
      it('creates one whsec_ secret with each account, distinct per account', () =>
        withStore(async (store, clock) => {
          const a = await store.createAccount();
          clock.now = T0 + 5;
          const b = await store.createAccount();
          const [secretA, ...moreA] = await store.getWebhookSecrets(a.id);
          const [secretB, ...moreB] = await store.getWebhookSecrets(b.id);
          assert.ok(secretA && secretB);
          assert.deepEqual([moreA, moreB], [[], []]);
          assert.deepEqual(secretA, { secret: secretA.secret, createdAt: T0, expiresAt: null });
          assert.deepEqual(secretB, { secret: secretB.secret, createdAt: T0 + 5, expiresAt: null });
          for (const { secret } of [secretA, secretB]) {
            assert.match(secret, WHSEC);
            assert.equal(Buffer.from(secret.slice('whsec_'.length), 'base64').length, 32);
          }
          assert.notEqual(secretA.secret, secretB.secret);
          clock.now = T0 + 1_000_000_000;
          assert.deepEqual(await store.getWebhookSecrets(a.id), [secretA], 'a current secret never expires');
          assert.deepEqual(await store.getWebhookSecrets('acct_nobody'), []);
        }));

      it('rotation puts the new secret first; the old one signs until the overlap ends, then is gone', () =>
        withStore(async (store, clock) => {
          const account = await store.createAccount();
          const other = await store.createAccount();
          const [old] = await store.getWebhookSecrets(account.id);
          const othersBefore = await store.getWebhookSecrets(other.id);
          assert.ok(old);
          clock.now = T0 + 1000;
          const rotated = await store.rotateWebhookSecret(account.id, 60_000);
          assert.match(rotated.secret, WHSEC);
          assert.notEqual(rotated.secret, old.secret);
          assert.deepEqual(rotated, { secret: rotated.secret, createdAt: T0 + 1000, expiresAt: null });
          const retired = { ...old, expiresAt: T0 + 61_000 };
          assert.deepEqual(await store.getWebhookSecrets(account.id), [rotated, retired]);
          clock.now = T0 + 61_000 - 1;
          assert.deepEqual(await store.getWebhookSecrets(account.id), [rotated, retired]);
          clock.now = T0 + 61_000;
          assert.deepEqual(await store.getWebhookSecrets(account.id), [rotated]);
          clock.now = T0 + 10_000_000;
          assert.deepEqual(await store.getWebhookSecrets(account.id), [rotated]);
          assert.deepEqual(
            await store.getWebhookSecrets(other.id),
            othersBefore,
            'other accounts keep theirs',
          );
        }));

      it('rotating twice keeps each retired secret signing until its own overlap ends', () =>
        withStore(async (store, clock) => {
          const account = await store.createAccount();
          const [first] = await store.getWebhookSecrets(account.id);
          assert.ok(first);
          clock.now = T0 + 1000;
          const second = await store.rotateWebhookSecret(account.id, 60_000);
          clock.now = T0 + 11_000;
          const third = await store.rotateWebhookSecret(account.id, 60_000);
          assert.equal(new Set([first.secret, second.secret, third.secret]).size, 3);
          const all = [
            third,
            { ...second, expiresAt: T0 + 71_000 },
            { ...first, expiresAt: T0 + 61_000 },
          ] as const;
          assert.deepEqual(await store.getWebhookSecrets(account.id), all);
          clock.now = T0 + 61_000 - 1;
          assert.deepEqual(await store.getWebhookSecrets(account.id), all);
          clock.now = T0 + 61_000;
          assert.deepEqual(await store.getWebhookSecrets(account.id), [all[0], all[1]]);
          clock.now = T0 + 71_000;
          assert.deepEqual(await store.getWebhookSecrets(account.id), [third]);
        }));

      it('rotation with no overlap retires every older secret at once', () =>
        withStore(async (store, clock) => {
          const account = await store.createAccount();
          clock.now = T0 + 1000;
          const second = await store.rotateWebhookSecret(account.id, 60_000);
          assert.equal((await store.getWebhookSecrets(account.id)).length, 2);
          clock.now = T0 + 2000;
          const third = await store.rotateWebhookSecret(account.id, 0);
          assert.notEqual(third.secret, second.secret);
          assert.deepEqual(await store.getWebhookSecrets(account.id), [third]);
        }));

      it('puts the newest secret first even when rotations share a millisecond', () =>
        withStore(async (store) => {
          const account = await store.createAccount();
          const [first] = await store.getWebhookSecrets(account.id);
          assert.ok(first);
          const second = await store.rotateWebhookSecret(account.id, 60_000);
          let secrets = await store.getWebhookSecrets(account.id);
          assert.deepEqual(secrets[0], second);
          assert.deepEqual(new Set(secrets.map((s) => s.secret)), new Set([first.secret, second.secret]));
          const third = await store.rotateWebhookSecret(account.id, 60_000);
          secrets = await store.getWebhookSecrets(account.id);
          assert.deepEqual(secrets[0], third);
          assert.equal(secrets.length, 3);
          assert.deepEqual(
            secrets.slice(1).map((s) => s.expiresAt),
            [T0 + 60_000, T0 + 60_000],
          );
        }));
    });

    describe('outbox: status changes queue callbacks', () => {
      it('queues task.processing on the first claim, carrying the task as claimed', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const created = await addTask(store, scope);
          assert.deepEqual(await deliveries(store, created.id), [], 'creating a task queues nothing');
          clock.now = T0 + 1500;
          const task = await claim(store);
          const delivery = await onlyDelivery(store, task.id);
          assert.deepEqual(delivery, expectedDelivery(delivery, task, T0 + 1500));
          assert.match(delivery.id, MESSAGE_ID);
          assert.deepEqual(delivery.payload, {
            id: task.id,
            object: 'video.generation.task',
            model: TEXT,
            status: 'processing',
            progress: 0,
            created_at: seconds(T0),
            updated_at: seconds(T0 + 1500),
            duration: 10,
            quality: '1080p',
            aspect_ratio: '16:9',
            seed: 4294967295,
            return_last_frame: false,
            generate_audio: false,
            task_info: { can_cancel: true, video_duration: 10 },
            usage: { video_seconds: 10 },
          });
        }));

      it('queues task.completed with the completed task: progress 100, completed_at, no results', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          await addTask(store, scope);
          const task = await claim(store);
          clock.now = T0 + 2000;
          assert.equal(await store.reportProgress(claimOf(task), 40), true);
          assert.deepEqual(await events(store, task.id), ['task.processing'], 'progress queues nothing');
          clock.now = T0 + 9_500;
          assert.equal(await store.completeTask(claimOf(task), 'results/r.mp4'), true);
          const done = await mustGet(store, task.id);
          const [processing, completed, ...rest] = await deliveries(store, task.id);
          assert.ok(processing && completed);
          assert.equal(rest.length, 0);
          assert.equal(processing.event, 'task.processing');
          assert.notEqual(completed.id, processing.id);
          assert.deepEqual(completed, expectedDelivery(completed, done, T0 + 9_500));
          assert.equal(completed.payload.status, 'completed');
          assert.equal(completed.payload.progress, 100);
          assert.equal(completed.payload.completed_at, seconds(T0 + 9_500));
          assert.equal(completed.payload.updated_at, seconds(T0 + 9_500));
          assert.equal(completed.payload.results, undefined, 'links are signed when sent, not stored');
          assert.equal(completed.payload.error, undefined);
        }));

      it('queues task.failed with the error and the progress reached', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          await addTask(store, scope);
          const task = await claim(store);
          await store.reportProgress(claimOf(task), 42);
          clock.now = T0 + 7_000;
          const error: TaskError = {
            code: 'asset_fetch_failed',
            message: 'image_urls[0] returned 404 — "nöt found" ✓',
          };
          assert.equal(await store.failTask(claimOf(task), error), true);
          const failedTask = await mustGet(store, task.id);
          const [, failed, ...rest] = await deliveries(store, task.id);
          assert.ok(failed);
          assert.equal(rest.length, 0);
          assert.deepEqual(failed, expectedDelivery(failed, failedTask, T0 + 7_000));
          assert.equal(failed.payload.status, 'failed');
          assert.equal(failed.payload.progress, 42);
          assert.deepEqual(failed.payload.error, error);
          assert.equal(failed.payload.completed_at, seconds(T0 + 7_000));
          assert.equal(failed.payload.results, undefined);
        }));

      it('failAbandonedTasks queues task.failed (worker_lost) for each task it fails, and only those', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const a = await addTask(store, scope);
          clock.now += 1;
          const b = await addTask(store, scope, { ...PARAMS, callback_url: OTHER_URL });
          clock.now += 1;
          const silent = await addTask(store, scope, NO_CALLBACK);
          clock.now = T0 + 10;
          for (const id of [a.id, b.id, silent.id]) assert.equal((await claim(store, 'w-1', 1)).id, id);
          clock.now = T0 + 10 + LEASE;
          const live = await addTask(store, scope);
          assert.equal((await claim(store, 'w-2', 1)).id, live.id);
          clock.now = T0 + LEASE + 500;
          assert.equal(await store.failAbandonedTasks(1), 3);
          for (const [task, url, host] of [
            [a, CALLBACK_URL, CALLBACK_HOST],
            [b, OTHER_URL, OTHER_HOST],
          ] as const) {
            const abandoned = await mustGet(store, task.id);
            assert.equal(abandoned.error?.code, 'worker_lost');
            const [processing, failed, ...rest] = await deliveries(store, task.id);
            assert.ok(processing && failed);
            assert.equal(rest.length, 0);
            assert.equal(processing.event, 'task.processing');
            assert.deepEqual(failed, expectedDelivery(failed, abandoned, T0 + LEASE + 500, url, host));
            assert.deepEqual(failed.payload.error, abandoned.error);
            assert.equal(failed.payload.error?.code, 'worker_lost');
          }
          assert.deepEqual(await deliveries(store, silent.id), []);
          assert.deepEqual(await events(store, live.id), ['task.processing']);
          clock.now += LEASE * 10;
          assert.equal(await store.failAbandonedTasks(1), 1, 'now the live one');
          assert.deepEqual(await events(store, a.id), ['task.processing', 'task.failed']);
          assert.deepEqual(await events(store, live.id), ['task.processing', 'task.failed']);
          assert.equal(await store.failAbandonedTasks(1), 0);
          assert.deepEqual(await events(store, live.id), ['task.processing', 'task.failed']);
        }));

      it('claims tasks with and without a callback_url in creation order', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const order = [];
          for (const params of [PARAMS, NO_CALLBACK, NO_CALLBACK, PARAMS, NO_CALLBACK]) {
            order.push((await addTask(store, scope, params)).id);
            clock.now += 1;
          }
          const claimed = [];
          for (let i = 0; i < order.length; i++) claimed.push((await claim(store)).id);
          assert.deepEqual(claimed, order);
          assert.equal(
            await store.claimTask({ workerId: 'worker-1', leaseMs: LEASE, maxAttempts: 3 }),
            undefined,
          );
          assert.deepEqual(await events(store, order[0]!), ['task.processing']);
          assert.deepEqual(await events(store, order[1]!), []);
          assert.deepEqual(await events(store, order[3]!), ['task.processing']);
        }));

      it('queues nothing for a task without a callback_url', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const completed = await addTask(store, scope, NO_CALLBACK);
          clock.now += 1;
          const failed = await addTask(store, scope, NO_CALLBACK);
          clock.now += 1;
          const abandoned = await addTask(store, scope, NO_CALLBACK);
          const first = await claim(store);
          assert.equal(first.id, completed.id);
          assert.equal(await store.releaseTask(claimOf(first)), true);
          const again = await claim(store);
          assert.equal(again.id, completed.id);
          assert.equal(await store.completeTask(claimOf(again), 'results/a.mp4'), true);
          const toFail = await claim(store);
          assert.equal(toFail.id, failed.id);
          assert.equal(
            await store.failTask(claimOf(toFail), { code: 'generation_failed', message: 'no' }),
            true,
          );
          assert.equal((await claim(store, 'w-1', 1)).id, abandoned.id);
          clock.now += LEASE + 1;
          assert.equal(await store.failAbandonedTasks(1), 1);
          for (const task of [completed, failed, abandoned]) {
            assert.deepEqual(await deliveries(store, task.id), [], task.id);
          }
          clock.now += 1_000_000;
          assert.deepEqual(await claimDue(store), []);
        }));

      it('queues task.processing only once, across a release and an expired-lease re-claim', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          await addTask(store, scope);
          clock.now = T0 + 100;
          const first = await claim(store, 'w-1');
          const queued = await onlyDelivery(store, first.id);
          assert.deepEqual(queued, expectedDelivery(queued, first, T0 + 100));
          // Even once that callback has been sent.
          const sending = await claimOne(store);
          assert.equal(
            await store.finishDeliveryAttempt(deliveryClaimOf(sending, 'sender-1'), attempt(T0 + 150, 200), {
              status: 'succeeded',
            }),
            true,
          );
          const sent = await onlyDelivery(store, first.id);
          clock.now = T0 + 200;
          assert.equal(await store.releaseTask(claimOf(first)), true);
          clock.now = T0 + 300;
          const second = await claim(store, 'w-2');
          assert.equal(second.attempts, 1);
          assert.deepEqual(await deliveries(store, first.id), [sent], 'a re-claim after a release');
          clock.now = T0 + 300 + LEASE + 1;
          const third = await claim(store, 'w-3');
          assert.equal(third.attempts, 2);
          assert.deepEqual(await deliveries(store, first.id), [sent], 'a re-claim after a lost lease');
          assert.deepEqual(await claimDue(store), []);
          clock.now += 10;
          assert.equal(await store.completeTask(claimOf(third), 'results/t.mp4'), true);
          assert.deepEqual(await events(store, first.id), ['task.processing', 'task.completed']);
        }));

      it('a fenced write that loses queues nothing', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          await addTask(store, scope);
          const first = await claim(store, 'w-1');
          clock.now += LEASE + 1;
          const second = await claim(store, 'w-2');
          assert.deepEqual(await events(store, first.id), ['task.processing']);
          clock.now += 10;
          assert.equal(await store.completeTask(claimOf(first), 'results/stale.mp4'), false);
          assert.equal(await store.failTask(claimOf(first), { code: 'timeout', message: 'stale' }), false);
          assert.deepEqual(await events(store, first.id), ['task.processing']);
          clock.now += 10;
          assert.equal(await store.completeTask(claimOf(second), 'results/t.mp4'), true);
          const done = await mustGet(store, first.id);
          const listed = await deliveries(store, first.id);
          assert.deepEqual(
            listed.map((d) => d.event),
            ['task.processing', 'task.completed'],
          );
          assert.deepEqual(listed[1]?.payload, toPublicTask(done, undefined));
          clock.now += 10;
          // A second finish with the winning claim is stale too.
          assert.equal(await store.completeTask(claimOf(second), 'results/again.mp4'), false);
          assert.equal(await store.failTask(claimOf(second), { code: 'timeout', message: 'late' }), false);
          assert.deepEqual(await deliveries(store, first.id), listed);
        }));

      it("queues each task's callbacks with its own url, host and account", () =>
        withStore(async (store, clock) => {
          const one = await newScope(store);
          const two = await newScope(store);
          const a = await addTask(store, one);
          clock.now += 1;
          const b = await addTask(store, two, { ...PARAMS, callback_url: OTHER_URL });
          clock.now += 1;
          const claimedA = await claim(store);
          const claimedB = await claim(store);
          assert.deepEqual([claimedA.id, claimedB.id], [a.id, b.id]);
          const forA = await onlyDelivery(store, a.id);
          const forB = await onlyDelivery(store, b.id);
          assert.deepEqual(forA, expectedDelivery(forA, claimedA, T0 + 2));
          assert.deepEqual(forB, expectedDelivery(forB, claimedB, T0 + 2, OTHER_URL, OTHER_HOST));
          assert.equal(forA.accountId, one.accountId);
          assert.equal(forB.accountId, two.accountId);
          assert.equal(forB.url, OTHER_URL);
          assert.equal(forB.host, OTHER_HOST);
        }));
    });

    describe('redelivery', () => {
      it('createDelivery queues a new message, due at once, beside the earlier ones', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          await addTask(store, scope);
          const task = await claim(store);
          clock.now = T0 + 5_000;
          await store.completeTask(claimOf(task), 'results/r.mp4');
          const done = await mustGet(store, task.id);
          const [processing, completed] = await deliveries(store, task.id);
          assert.ok(processing && completed);
          clock.now = T0 + 60_000;
          const wanted = newDelivery(done);
          const created = await store.createDelivery(wanted);
          assert.deepEqual(created, {
            ...wanted,
            status: 'pending',
            attemptCount: 0,
            nextAttemptAt: T0 + 60_000,
            createdAt: T0 + 60_000,
            updatedAt: T0 + 60_000,
          });
          assert.match(created.id, MESSAGE_ID);
          assert.equal(new Set([processing.id, completed.id, created.id]).size, 3, 'a new webhook-id');
          assert.equal(created.event, 'task.completed');
          assert.deepEqual(created.payload, completed.payload, 'the same task, the same body');
          assert.deepEqual(await deliveries(store, task.id), [
            processing,
            completed,
            { ...created, attempts: [] },
          ]);
          assert.deepEqual(
            (await claimDue(store)).map((d) => d.id),
            [processing.id, completed.id, created.id],
          );
        }));

      it('refuses a second delivery with the same id', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const { task, delivery } = await processingDelivery(store, scope);
          clock.now += 10;
          await assert.rejects(store.createDelivery(newDelivery(task, delivery.id)));
          assert.deepEqual(await deliveries(store, task.id), [delivery]);
        }));
    });

    describe('claiming deliveries', () => {
      it('claims only due deliveries, oldest first, at most `limit` at a time', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const { task, delivery: d0 } = await processingDelivery(store, scope);
          const ids = descendingDeliveryIds(4);
          const made: DeliveryRecord[] = [];
          for (const [i, id] of ids.entries()) {
            clock.now = T0 + 10 * (i + 1);
            made.push(await store.createDelivery(newDelivery(task, id)));
          }
          // One queued for later: not due until then.
          clock.now = T0 + 1000;
          const later = await store.createDelivery(newDelivery(task));
          const [d1, d2, d3, d4] = made;
          assert.ok(d1 && d2 && d3 && d4);
          clock.now = T0 + 50;
          assert.deepEqual(await claimDue(store, { limit: 0 }), []);
          const firstTwo = await claimDue(store, { limit: 2 });
          assert.deepEqual(
            firstTwo.map((d) => d.id),
            [d0.id, d1.id],
          );
          assert.deepEqual(
            (await claimDue(store, { limit: 2 })).map((d) => d.id),
            [d2.id, d3.id],
          );
          assert.deepEqual(
            (await claimDue(store, { limit: 2 })).map((d) => d.id),
            [d4.id],
          );
          assert.deepEqual(await claimDue(store), []);
          clock.now = T0 + 999;
          assert.deepEqual(await claimDue(store), []);
          clock.now = T0 + 1000;
          assert.deepEqual(
            (await claimDue(store)).map((d) => d.id),
            [later.id],
          );
          // Each claim counted one attempt and holds the delivery for the lease.
          assert.deepEqual(firstTwo, [
            {
              ...withoutAttempts(d0),
              attemptCount: 1,
              nextAttemptAt: T0 + 50 + SEND_LEASE,
              updatedAt: T0 + 50,
            },
            { ...d1, attemptCount: 1, nextAttemptAt: T0 + 50 + SEND_LEASE, updatedAt: T0 + 50 },
          ]);
          const listed = await deliveries(store, task.id);
          assert.deepEqual(
            listed.map((d) => d.id),
            [d0.id, d1.id, d2.id, d3.id, d4.id, later.id],
          );
          assert.deepEqual(listed.slice(0, 2).map(withoutAttempts), firstTwo);
          assert.ok(listed.every((d) => d.status === 'pending' && d.attemptCount === 1));
        }));

      it('claims by when a delivery is due, not when it was made', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const { task, delivery: older } = await processingDelivery(store, scope);
          clock.now = T0 + 10;
          const newer = await store.createDelivery(newDelivery(task));
          const first = await claimOne(store);
          assert.equal(first.id, older.id);
          const retryOlderAt = T0 + 5_000;
          assert.equal(
            await store.finishDeliveryAttempt(deliveryClaimOf(first, 'sender-1'), attempt(T0 + 10, 500), {
              status: 'pending',
              nextAttemptAt: retryOlderAt,
            }),
            true,
          );
          clock.now = T0 + 20;
          const second = await claimOne(store);
          assert.equal(second.id, newer.id);
          assert.equal(
            await store.finishDeliveryAttempt(deliveryClaimOf(second, 'sender-1'), attempt(T0 + 20, 502), {
              status: 'pending',
              nextAttemptAt: T0 + 3_000,
            }),
            true,
          );
          clock.now = T0 + 10_000;
          assert.equal((await claimOne(store)).id, newer.id, 'due at T0 + 3000');
          assert.equal((await claimOne(store)).id, older.id, 'due at T0 + 5000');
        }));

      it('leaves out the hosts in excludeHosts, which do not use up the limit', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const { task: toHooks, delivery: a1 } = await processingDelivery(store, scope);
          clock.now += 1;
          const a2 = await store.createDelivery(newDelivery(toHooks));
          clock.now += 1;
          const { task: toOther, delivery: b1 } = await processingDelivery(store, scope, {
            ...PARAMS,
            callback_url: OTHER_URL,
          });
          assert.equal(b1.host, OTHER_HOST);
          clock.now += 1;
          assert.deepEqual(await claimDue(store, { excludeHosts: [CALLBACK_HOST, OTHER_HOST] }), []);
          const got = await claimDue(store, { limit: 1, excludeHosts: [CALLBACK_HOST] });
          assert.deepEqual(
            got.map((d) => d.id),
            [b1.id],
          );
          const b2 = await store.createDelivery(newDelivery(toOther));
          // Hosts match exactly: without its port, OTHER_HOST is another receiver.
          assert.deepEqual(
            (await claimDue(store, { excludeHosts: ['receiver.example.org'] })).map((d) => d.id),
            [a1.id, a2.id, b2.id],
          );
        }));

      it('takes no more for a host than its room under perHostLimit, oldest first, and fills the limit with others', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const { task: toHooks, delivery: a1 } = await processingDelivery(store, scope);
          const hooks: DeliveryRecord[] = [a1];
          for (let i = 0; i < 5; i++) {
            clock.now += 1;
            hooks.push(await store.createDelivery(newDelivery(toHooks)));
          }
          clock.now += 1;
          const { task: toOther, delivery: b1 } = await processingDelivery(store, scope, {
            ...PARAMS,
            callback_url: OTHER_URL,
          });
          clock.now += 1;
          const b2 = await store.createDelivery(newDelivery(toOther));
          clock.now += 1;

          const got = await claimDue(store, {
            limit: 10,
            perHostLimit: 4,
            hostsInFlight: { [CALLBACK_HOST]: 1 },
          });
          assert.deepEqual(
            got.map((d) => d.id),
            [hooks[0]?.id, hooks[1]?.id, hooks[2]?.id, b1.id, b2.id],
            'three for the host with one in flight, the oldest; both for the other',
          );
          const again = await claimDue(store, { limit: 10, perHostLimit: 2 });
          assert.deepEqual(
            again.map((d) => d.id),
            [hooks[3]?.id, hooks[4]?.id],
            'unclaimed ones stay due; the room caps them again',
          );
          assert.deepEqual(
            (await claimDue(store, { limit: 1, perHostLimit: 4 })).map((d) => d.id),
            [hooks[5]?.id],
            'limit still applies',
          );
        }));

      it("with host, claims only that receiver's due deliveries, oldest first, within its room", () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const { task: toOther, delivery: b1 } = await processingDelivery(store, scope, {
            ...PARAMS,
            callback_url: OTHER_URL,
          });
          clock.now += 1;
          const { task: toHooks, delivery: a1 } = await processingDelivery(store, scope);
          const hooks: DeliveryRecord[] = [a1];
          for (let i = 0; i < 3; i++) {
            clock.now += 1;
            hooks.push(await store.createDelivery(newDelivery(toHooks)));
          }
          clock.now += 1;
          const b2 = await store.createDelivery(newDelivery(toOther));

          const got = await claimDue(store, {
            host: CALLBACK_HOST,
            limit: 10,
            perHostLimit: 4,
            hostsInFlight: { [CALLBACK_HOST]: 1 },
          });
          assert.deepEqual(
            got.map((d) => d.id),
            [hooks[0]?.id, hooks[1]?.id, hooks[2]?.id],
            'the three oldest of the host with one in flight; none for the older other receiver',
          );
          assert.deepEqual(
            (await claimDue(store, { host: CALLBACK_HOST, limit: 10, perHostLimit: 4 })).map((d) => d.id),
            [hooks[3]?.id],
          );
          assert.deepEqual(await claimDue(store, { host: CALLBACK_HOST, limit: 10 }), []);
          assert.deepEqual(
            (await claimDue(store, { limit: 10 })).map((d) => d.id),
            [b1.id, b2.id],
            "the other receiver's are still due",
          );
        }));

      it('does not claim a claimed delivery again until its lease lapses, then counts one more attempt', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const { task, delivery } = await processingDelivery(store, scope);
          clock.now = T0 + 100;
          const first = await claimOne(store, 'sender-1');
          assert.deepEqual(first, {
            ...withoutAttempts(delivery),
            attemptCount: 1,
            nextAttemptAt: T0 + 100 + SEND_LEASE,
            updatedAt: T0 + 100,
          });
          clock.now = T0 + 100 + SEND_LEASE - 1;
          assert.deepEqual(await claimDue(store, { workerId: 'sender-2' }), []);
          clock.now = T0 + 100 + SEND_LEASE;
          const second = await claimOne(store, 'sender-2');
          assert.deepEqual(second, {
            ...first,
            attemptCount: 2,
            nextAttemptAt: clock.now + SEND_LEASE,
            updatedAt: clock.now,
          });
          // The first sender's claim is stale now: its writes change nothing.
          const before = await deliveries(store, task.id);
          clock.now += 5;
          assert.equal(
            await store.finishDeliveryAttempt(deliveryClaimOf(first, 'sender-1'), attempt(T0 + 100, 200), {
              status: 'succeeded',
            }),
            false,
          );
          assert.equal(await store.releaseDelivery(deliveryClaimOf(first, 'sender-1')), false);
          assert.deepEqual(await deliveries(store, task.id), before);
          assert.equal(
            await store.finishDeliveryAttempt(
              deliveryClaimOf(second, 'sender-2'),
              attempt(clock.now - 5, 204),
              {
                status: 'succeeded',
              },
            ),
            true,
          );
          const [done] = await deliveries(store, task.id);
          assert.equal(done?.status, 'succeeded');
          assert.deepEqual(
            done?.attempts.map((a) => a.number),
            [2],
          );
        }));

      it('a late finish still counts while no one else has claimed the delivery', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const { task } = await processingDelivery(store, scope);
          const claimed = await claimOne(store);
          clock.now = T0 + SEND_LEASE * 3;
          assert.equal(
            await store.finishDeliveryAttempt(deliveryClaimOf(claimed, 'sender-1'), attempt(T0, 200), {
              status: 'succeeded',
            }),
            true,
          );
          const done = await onlyDelivery(store, task.id);
          assert.equal(done.status, 'succeeded');
          assert.equal(done.attemptCount, 1);
          assert.deepEqual(await claimDue(store), []);
        }));

      it('never hands the same delivery to two concurrent claims', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const { task, delivery } = await processingDelivery(store, scope);
          const ids = new Set([delivery.id]);
          for (let i = 0; i < 11; i++) {
            clock.now += 1;
            ids.add((await store.createDelivery(newDelivery(task))).id);
          }
          const concurrent = await Promise.all(
            Array.from({ length: 6 }, (_, i) => claimDue(store, { workerId: `s-${i}`, limit: 3 })),
          );
          const got = concurrent.flat();
          for (const batch of concurrent) assert.ok(batch.length <= 3);
          // Bounded, so that a store that hands deliveries out again fails here rather than loops for ever.
          for (let round = 0, batch = await claimDue(store); batch.length > 0 && round < 20; round++) {
            got.push(...batch);
            batch = await claimDue(store);
          }
          assert.equal(got.length, 12);
          assert.deepEqual(new Set(got.map((d) => d.id)), ids);
          assert.ok(got.every((d) => d.attemptCount === 1));
        }));
    });

    describe('finishing and releasing attempts', () => {
      it('logs each attempt; a pending outcome is due again at nextAttemptAt exactly; success is final', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const { task, delivery } = await processingDelivery(store, scope);
          clock.now = T0 + 100;
          const first = await claimOne(store);
          clock.now = T0 + 400;
          const one = attempt(T0 + 110, 503, null, 250);
          assert.equal(
            await store.finishDeliveryAttempt(deliveryClaimOf(first, 'sender-1'), one, {
              status: 'pending',
              nextAttemptAt: T0 + 5_000,
            }),
            true,
          );
          assert.deepEqual(await deliveries(store, task.id), [
            {
              ...delivery,
              attemptCount: 1,
              nextAttemptAt: T0 + 5_000,
              updatedAt: T0 + 400,
              attempts: [{ number: 1, ...one }],
            },
          ]);
          clock.now = T0 + 5_000 - 1;
          assert.deepEqual(await claimDue(store), []);
          clock.now = T0 + 5_000;
          const second = await claimOne(store, 'sender-2');
          assert.equal(second.attemptCount, 2);
          const two = attempt(T0 + 5_001, null, 'connect ECONNREFUSED 10.0.0.1:443 — "refused" ✓', 15_000);
          clock.now = T0 + 20_001;
          assert.equal(
            await store.finishDeliveryAttempt(deliveryClaimOf(second, 'sender-2'), two, {
              status: 'pending',
              nextAttemptAt: T0 + 60_000,
            }),
            true,
          );
          clock.now = T0 + 60_000;
          const third = await claimOne(store);
          assert.equal(third.attemptCount, 3);
          const three = attempt(T0 + 60_000, 204, null, 0);
          clock.now = T0 + 60_050;
          assert.equal(
            await store.finishDeliveryAttempt(deliveryClaimOf(third, 'sender-1'), three, {
              status: 'succeeded',
            }),
            true,
          );
          const done = await onlyDelivery(store, task.id);
          assert.deepEqual(done, {
            ...delivery,
            status: 'succeeded',
            attemptCount: 3,
            nextAttemptAt: null,
            updatedAt: T0 + 60_050,
            attempts: [
              { number: 1, ...one },
              { number: 2, ...two },
              { number: 3, ...three },
            ],
          });
          // Final: never claimed again, and the claim that finished it is spent.
          clock.now = T0 + 1_000_000_000;
          assert.deepEqual(await claimDue(store), []);
          const spent = deliveryClaimOf(third, 'sender-1');
          assert.equal(
            await store.finishDeliveryAttempt(spent, attempt(T0, 200), {
              status: 'pending',
              nextAttemptAt: T0,
            }),
            false,
          );
          assert.equal(await store.releaseDelivery(spent), false);
          assert.deepEqual(await onlyDelivery(store, task.id), done);
        }));

      it('a failed outcome is final', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const { task, delivery } = await processingDelivery(store, scope);
          const claimed = await claimOne(store);
          clock.now = T0 + 300;
          const gone = attempt(T0 + 10, 410, null, 35);
          assert.equal(
            await store.finishDeliveryAttempt(deliveryClaimOf(claimed, 'sender-1'), gone, {
              status: 'failed',
            }),
            true,
          );
          const failed = await onlyDelivery(store, task.id);
          assert.deepEqual(failed, {
            ...delivery,
            status: 'failed',
            attemptCount: 1,
            nextAttemptAt: null,
            updatedAt: T0 + 300,
            attempts: [{ number: 1, ...gone }],
          });
          clock.now = T0 + 1_000_000_000;
          assert.deepEqual(await claimDue(store), []);
          assert.equal(await store.releaseDelivery(deliveryClaimOf(claimed, 'sender-1')), false);
          assert.deepEqual(await onlyDelivery(store, task.id), failed);
        }));

      it('rejects a finish from a stale or wrong claim and logs nothing', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const { task } = await processingDelivery(store, scope);
          clock.now = T0 + 100;
          const claimed = await claimOne(store, 'sender-1');
          const current = deliveryClaimOf(claimed, 'sender-1');
          const before = await deliveries(store, task.id);
          clock.now = T0 + 200;
          const wrong: DeliveryClaim[] = [
            { ...current, workerId: 'sender-2' },
            { ...current, attempt: 0 },
            { ...current, attempt: 2 },
            { ...current, deliveryId: newId('msg') },
          ];
          for (const c of wrong) {
            const label = JSON.stringify(c);
            for (const outcome of [
              { status: 'succeeded' },
              { status: 'failed' },
              { status: 'pending', nextAttemptAt: T0 },
            ] as const) {
              assert.equal(
                await store.finishDeliveryAttempt(c, attempt(T0 + 150, 200), outcome),
                false,
                label,
              );
            }
            assert.equal(await store.releaseDelivery(c), false, label);
          }
          assert.deepEqual(await deliveries(store, task.id), before);
          assert.equal(
            await store.finishDeliveryAttempt(current, attempt(T0 + 150, 200), { status: 'succeeded' }),
            true,
          );
        }));

      it('finishDeliveryAttempts records a group at once; a stale claim in it records nothing, the others do', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const { task } = await processingDelivery(store, scope);
          clock.now += 1;
          await store.createDelivery(newDelivery(task));
          clock.now += 1;
          await store.createDelivery(newDelivery(task));
          clock.now += 1;
          const [first, second, third] = await claimDue(store, { limit: 3 });
          assert.ok(first && second && third);
          clock.now += 100;
          const recorded = await store.finishDeliveryAttempts([
            {
              claim: deliveryClaimOf(first, 'sender-1'),
              attempt: attempt(clock.now - 50, 204),
              outcome: { status: 'succeeded' },
            },
            {
              claim: deliveryClaimOf(second, 'sender-2'),
              attempt: attempt(clock.now - 50, 204),
              outcome: { status: 'succeeded' },
            },
            {
              claim: deliveryClaimOf(third, 'sender-1'),
              attempt: attempt(clock.now - 40, 503),
              outcome: { status: 'pending', nextAttemptAt: clock.now + 5000 },
            },
          ]);
          assert.deepEqual(recorded, [true, false, true]);
          const byId = new Map((await deliveries(store, task.id)).map((d) => [d.id, d]));
          assert.equal(byId.get(first.id)?.status, 'succeeded');
          assert.deepEqual(byId.get(first.id)?.attempts, [{ number: 1, ...attempt(clock.now - 50, 204) }]);
          assert.equal(byId.get(second.id)?.status, 'pending', 'the stale claim changed nothing');
          assert.deepEqual(byId.get(second.id)?.attempts, []);
          assert.equal(byId.get(third.id)?.status, 'pending');
          assert.equal(byId.get(third.id)?.nextAttemptAt, clock.now + 5000);
          assert.deepEqual(byId.get(third.id)?.attempts, [{ number: 1, ...attempt(clock.now - 40, 503) }]);
          assert.deepEqual(await store.finishDeliveryAttempts([]), []);
        }));

      it('releaseDelivery undoes an unattempted claim: the attempt uncounted, due at once', () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          const { task, delivery } = await processingDelivery(store, scope);
          clock.now = T0 + 100;
          const claimed = await claimOne(store);
          assert.equal(claimed.attemptCount, 1);
          clock.now = T0 + 200;
          assert.equal(await store.releaseDelivery(deliveryClaimOf(claimed, 'sender-1')), true);
          const released = await onlyDelivery(store, task.id);
          assert.deepEqual(released, {
            ...delivery,
            attemptCount: 0,
            nextAttemptAt: T0 + 200,
            updatedAt: T0 + 200,
            attempts: [],
          });
          // The released claim is spent.
          assert.equal(await store.releaseDelivery(deliveryClaimOf(claimed, 'sender-1')), false);
          assert.equal(
            await store.finishDeliveryAttempt(deliveryClaimOf(claimed, 'sender-1'), attempt(T0, 200), {
              status: 'succeeded',
            }),
            false,
          );
          assert.deepEqual(await onlyDelivery(store, task.id), released);
          // Due at once, and its next claim is attempt 1 again.
          const again = await claimOne(store, 'sender-2');
          assert.equal(again.id, delivery.id);
          assert.equal(again.attemptCount, 1);
          assert.equal(
            await store.finishDeliveryAttempt(deliveryClaimOf(again, 'sender-2'), attempt(T0 + 200, 200), {
              status: 'succeeded',
            }),
            true,
          );
          assert.deepEqual(
            (await onlyDelivery(store, task.id)).attempts.map((a) => a.number),
            [1],
          );
        }));
    });

    describe('listing deliveries', () => {
      it("lists a task's deliveries oldest first, each with its attempts in order, and no other task's", () =>
        withStore(async (store, clock) => {
          const scope = await newScope(store);
          await addTask(store, scope);
          clock.now = T0 + 1;
          const otherTask = await addTask(store, scope);
          const task = await claim(store);
          const other = await claim(store);
          assert.equal(other.id, otherTask.id);
          const processing = await onlyDelivery(store, task.id);
          const [laterId, earlierId] = descendingDeliveryIds(2);
          assert.ok(laterId && earlierId);
          clock.now = T0 + 10;
          const earlier = await store.createDelivery(newDelivery(task, earlierId));
          clock.now = T0 + 20;
          const later = await store.createDelivery(newDelivery(task, laterId));
          // Attempts interleaved across the deliveries of both tasks.
          const logged = new Map<string, DeliveryAttempt[]>();
          for (let round = 1; round <= 2; round++) {
            clock.now = T0 + 1000 * round;
            const claimed = await claimDue(store);
            assert.equal(claimed.length, 4);
            for (const delivery of claimed) {
              const result = attempt(clock.now + 1, 500 + round, null, round * 10);
              assert.equal(
                await store.finishDeliveryAttempt(deliveryClaimOf(delivery, 'sender-1'), result, {
                  status: 'pending',
                  nextAttemptAt: clock.now + 500,
                }),
                true,
              );
              logged.set(delivery.id, [...(logged.get(delivery.id) ?? []), { number: round, ...result }]);
            }
          }
          const listed = await deliveries(store, task.id);
          assert.deepEqual(
            listed.map((d) => d.id),
            [processing.id, earlier.id, later.id],
          );
          for (const delivery of listed) {
            assert.equal(delivery.taskId, task.id);
            assert.equal(delivery.attempts.length, 2);
            assert.deepEqual(delivery.attempts, logged.get(delivery.id));
          }
          const forOther = await onlyDelivery(store, other.id);
          assert.equal(forOther.attempts.length, 2);
          assert.deepEqual(forOther.attempts, logged.get(forOther.id));
        }));

      it('lists nothing for an unknown task or one without deliveries', () =>
        withStore(async (store) => {
          const scope = await newScope(store);
          const pending = await addTask(store, scope);
          assert.deepEqual(await store.listDeliveries(newTaskId()), []);
          assert.deepEqual(await store.listDeliveries(pending.id), []);
          assert.deepEqual(await store.listDeliveries(''), []);
        }));
    });
  });
}

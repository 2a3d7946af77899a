/**
 * Listing, cancelling and deleting tasks through real HTTP: cancel during a render frees the worker for the
 * next task at once and fires the callback; delete removes the task and its files; the list pages newest
 * first with filters; the 4xx answers that belong to them.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { resultKey } from '../src/domain/storage-keys.js';
import type { PublicTask } from '../src/domain/task.js';
import { Api, type ErrorBody } from './helpers/api.js';
import { startTestService, type TestService } from './helpers/test-service.js';
import { startWebhookReceiver, type WebhookReceiver } from './helpers/webhook-receiver.js';

const FAST = { model: 'videogen-2.0-fast-text-to-video', prompt: 'a red kite', duration: 4, quality: '480p' };
/** A render that never ends by itself (the text model runs a command that hangs): only a cancel stops it. */
const LONG = { model: 'videogen-2.0-text-to-video', prompt: 'a long one', duration: 15, quality: '1080p' };
/** The fixture stays in the source tree; the compiled test runs from dist/test. */
const GENERATOR = fileURLToPath(new URL('../../test/fixtures/fake-generator.mjs', import.meta.url));

interface TaskList {
  object: 'list';
  data: PublicTask[];
  has_more: boolean;
  next_cursor: string | null;
}

let engines: string;
let server: TestService;
let hook: WebhookReceiver;
let api: Api;

before(async () => {
  engines = await mkdtemp(join(tmpdir(), 'videogen-task-management-'));
  const file = join(engines, 'engines.json');
  await writeFile(
    file,
    JSON.stringify({
      engines: {
        // Reports some progress, then runs until its process group is stopped.
        hang: {
          type: 'exec',
          command: [process.execPath, GENERATOR, '--save_file', '{output}'],
          env: { FAKE_MODE: 'hang' },
        },
      },
      models: { 'videogen-2.0-text-to-video': 'hang', 'videogen-2.0-fast-text-to-video': 'local' },
    }),
  );
  server = await startTestService({
    VIDEOGEN_WORKER_CONCURRENCY: '1',
    VIDEOGEN_ENGINES_FILE: file,
    // A run renews its lease every third of it, and a renewal refused (the task is no longer processing) also
    // stops it: every 20 minutes here, far from the cancel's own, immediate, stop.
    VIDEOGEN_LEASE_SECONDS: '3600',
    // Polled often: the rate limit is not what these tests are about.
    VIDEOGEN_RATE_LIMIT_PER_MINUTE: '0',
  });
  hook = await startWebhookReceiver();
  api = new Api(server.url, (await server.newKey()).key);
});
after(async () => {
  await server.close();
  await hook.close();
  await rm(engines, { recursive: true, force: true });
});

describe('cancelling', () => {
  it('stops a render in progress, frees its worker at once, and fires the callback', async () => {
    const { body: long } = await api.create({ ...LONG, callback_url: hook.url });
    await api.pollUntil(long.id, (t) => t.status === 'processing' && t.progress > 0, 30_000, 50);
    const { body: next } = await api.create(FAST);

    const cancel = await api.request<PublicTask>('POST', `/v1/tasks/${long.id}/cancel`);
    assert.equal(cancel.status, 200);
    assert.equal(cancel.body.status, 'failed');
    assert.deepEqual(cancel.body.error, { code: 'cancelled', message: 'The task was cancelled.' });

    // One worker slot: the next task can only start once the cancelled render has let go of it, and that
    // render never ends by itself: the cancel stopped it, at once (not at the lease renewal, 20 minutes on).
    const started = await api.pollUntil(next.id, (t) => t.status !== 'pending', 60_000, 20);
    assert.notEqual(started.status, 'pending', 'the next task started');
    assert.equal((await api.waitForFinal(next.id, 60_000)).status, 'completed');

    const final = (await api.get(long.id)).body;
    assert.equal(final.status, 'failed', 'the cancelled render never completes it');
    assert.equal(final.error?.code, 'cancelled');

    const secret = await server.service.store.getWebhookSecrets(
      (await server.service.store.getTask(long.id))?.accountId ?? '',
    );
    const received = await hook.waitFor(2, 15_000);
    const events = received.map((webhook) => {
      const body = new Webhook(secret[0]?.secret ?? '').verify(webhook.body, {
        'webhook-id': String(webhook.headers['webhook-id']),
        'webhook-timestamp': String(webhook.headers['webhook-timestamp']),
        'webhook-signature': String(webhook.headers['webhook-signature']),
      }) as PublicTask;
      return `${body.status}:${body.error?.code ?? ''}`;
    });
    assert.deepEqual(events.sort(), ['failed:cancelled', 'processing:']);
  });

  it('cancels a pending task, and answers 409 task_not_cancellable for a final one', async () => {
    await server.service.pool?.stop(0);
    const { body: queued } = await api.create(FAST);
    const cancelled = await api.request<PublicTask>('POST', `/v1/tasks/${queued.id}/cancel`);
    assert.equal(cancelled.status, 200);
    assert.equal(cancelled.body.error?.code, 'cancelled');

    const again = await api.request<ErrorBody>('POST', `/v1/tasks/${queued.id}/cancel`);
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 'task_not_cancellable');
    assert.equal(again.body.error.type, 'conflict_error');

    const missing = await api.request<ErrorBody>('POST', '/v1/tasks/task-unified-nope/cancel');
    assert.equal(missing.status, 404);
    const other = new Api(server.url, (await server.newKey()).key);
    assert.equal((await other.request('POST', `/v1/tasks/${queued.id}/cancel`)).status, 404);
  });
});

describe('deleting', () => {
  it('removes a final task and its video; a running task is 409', async () => {
    const { body: completed } = await api.request<TaskList>('GET', '/v1/tasks?status=completed');
    const [done] = completed.data;
    assert.ok(done, 'a completed task from the cancel test');
    const videoPath = join(server.dataDir, 'files', resultKey(done.id));
    assert.ok(await stat(videoPath).catch(() => undefined), `the video is stored at ${videoPath}`);

    const deleted = await api.request<{ id: string; deleted: boolean }>('DELETE', `/v1/tasks/${done.id}`);
    assert.equal(deleted.status, 200);
    assert.deepEqual(deleted.body, { id: done.id, object: 'video.generation.task', deleted: true });
    assert.equal((await api.get(done.id)).status, 404);
    assert.equal(await stat(videoPath).catch(() => undefined), undefined, 'the video is gone');
    assert.equal((await api.request('DELETE', `/v1/tasks/${done.id}`)).status, 404);

    const { body: queued } = await api.create(FAST);
    const refused = await api.request<ErrorBody>('DELETE', `/v1/tasks/${queued.id}`);
    assert.equal(refused.status, 409);
    assert.equal(refused.body.error.code, 'task_not_deletable');
  });
});

describe('listing', () => {
  it('pages newest first with a cursor, and filters by status, model and creation time', async () => {
    const lister = new Api(server.url, (await server.newKey()).key);
    const created: string[] = [];
    for (let i = 0; i < 5; i++) {
      const model = i % 2 === 0 ? 'videogen-2.0-fast-text-to-video' : 'videogen-2.0-text-to-video';
      created.push((await lister.create({ ...FAST, model })).body.id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor ? `?limit=2&after=${cursor}` : '?limit=2';
      const { status, body } = await lister.request<TaskList>('GET', `/v1/tasks${query}`);
      assert.equal(status, 200);
      assert.equal(body.object, 'list');
      assert.ok(body.data.length <= 2);
      seen.push(...body.data.map((t) => t.id));
      cursor = body.next_cursor;
      assert.equal(body.has_more, cursor !== null);
    } while (cursor);
    assert.deepEqual(seen, [...created].reverse(), 'every task once, newest first');

    const fast = await lister.request<TaskList>('GET', '/v1/tasks?model=videogen-2.0-fast-text-to-video');
    assert.equal(fast.body.data.length, 3);
    const pending = await lister.request<TaskList>('GET', '/v1/tasks?status=pending&limit=100');
    assert.equal(pending.body.data.length, 5);
    const future = Math.ceil(Date.now() / 1000) + 60;
    const none = await lister.request<TaskList>('GET', `/v1/tasks?created_after=${future}`);
    assert.deepEqual(none.body, { object: 'list', data: [], has_more: false, next_cursor: null });
    const all = await lister.request<TaskList>('GET', `/v1/tasks?created_before=${future}&limit=100`);
    assert.equal(all.body.data.length, 5);
  });

  it('names the parameter of a bad query', async () => {
    for (const [query, param, code] of [
      ['limit=0', 'limit', 'invalid_parameter'],
      ['limit=101', 'limit', 'invalid_parameter'],
      ['status=done', 'status', 'invalid_parameter'],
      ['model=sora', 'model', 'invalid_parameter'],
      ['after=bm9wZQ', 'after', 'invalid_parameter'],
      ['created_after=yesterday', 'created_after', 'invalid_parameter'],
      ['page=2', 'page', 'unknown_parameter'],
    ] as const) {
      const { status, body } = await api.request<ErrorBody>('GET', `/v1/tasks?${query}`);
      assert.equal(status, 400, query);
      assert.equal(body.error.code, code, query);
      assert.equal(body.error.param, param, query);
    }
  });
});

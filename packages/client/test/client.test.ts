/**
 * Every method of `VideogenClient` against a real `videogen serve` (one worker, the local engine): creating,
 * querying, listing across pages, cancelling, deleting, uploading, waiting (event stream and polling,
 * aborted or not), generating to a downloadable MP4, listing the models, and the typed errors of refused
 * requests. What needs no render runs against a second server with no worker (`VIDEOGEN_ROLE=api`), where
 * tasks stay pending: renders nobody waits for would hold up the worker's queue for the tests that do.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  ASPECT_RATIOS,
  AuthenticationError,
  type BuiltInModelId,
  type CompletedTask,
  ConflictError,
  DURATIONS,
  InvalidRequestError,
  MODEL_IDS,
  type Model,
  type ModelId,
  modeOf,
  NotFoundError,
  QUALITIES,
  type Task,
  TaskFailedError,
  VideogenClient,
  VideogenError,
} from '../src/index.js';
import { solidPng } from './helpers/png.js';
import { apiErrorResponse, recordingFetch } from './helpers/recording-fetch.js';
import { startServer, type TestServer } from './helpers/server.js';

const QUICK = {
  model: 'videogen-2.0-fast-text-to-video',
  prompt: 'a red kite',
  duration: 4,
  quality: '480p',
} as const;
/** Long enough to be still running a few seconds after it starts (cancel it when done with it). */
const SLOW = {
  model: 'videogen-2.0-text-to-video',
  prompt: 'a slow one',
  duration: 15,
  quality: '1080p',
} as const;
/** A standard-model render: long enough to report progress on the way. */
const MEDIUM = {
  model: 'videogen-2.0-text-to-video',
  prompt: 'a medium one',
  duration: 4,
  quality: '480p',
} as const;

describe('VideogenClient against a real server', () => {
  let server: TestServer;
  let client: VideogenClient;
  /** No worker runs there. */
  let apiOnly: TestServer;
  let apiOnlyClient: VideogenClient;

  before(async () => {
    [server, apiOnly] = await Promise.all([startServer(), startServer({ VIDEOGEN_ROLE: 'api' })]);
    client = new VideogenClient({ baseUrl: server.url, apiKey: server.apiKey });
    apiOnlyClient = new VideogenClient({ baseUrl: apiOnly.url, apiKey: apiOnly.apiKey });
  });
  after(async () => {
    await Promise.all([server?.stop(), apiOnly?.stop()]);
  });

  /** A client with a key of its own environment (production), whose task list no other test touches. */
  async function isolatedClient(): Promise<VideogenClient> {
    const key = (await apiOnly.cli(['keys', 'create', '--name', 'isolated', '--env', 'production'])).trim();
    return new VideogenClient({ baseUrl: apiOnly.url, apiKey: key });
  }

  it('creates a task and reads it back', async () => {
    const created = await client.createTask({ ...QUICK, seed: 42 });
    assert.match(created.id, /^task-unified-/);
    assert.equal(created.object, 'video.generation.task');
    assert.equal(created.status, 'pending');
    assert.equal(created.model, QUICK.model);
    assert.equal(created.seed, 42);
    assert.equal(created.aspect_ratio, '16:9');
    const read = await client.getTask(created.id);
    assert.equal(read.id, created.id);
    assert.equal(read.duration, 4);
    assert.equal(read.quality, '480p');
    const done = await client.getTask(created.id, { wait: 30 });
    assert.equal(done.status, 'completed');
  });

  // After a task has been rendered: the server's worker has registered by now, so every model is available.
  it('lists the models as the server routes them, and reads one', async () => {
    const recorder = recordingFetch();
    const recorded = new VideogenClient({
      baseUrl: server.url,
      apiKey: server.apiKey,
      fetch: recorder.fetch,
    });
    const models: Model[] = await recorded.listModels();
    assert.deepEqual(recorder.paths(), ['GET /v1/models']);
    assert.deepEqual(
      models.map((model) => model.id),
      [...MODEL_IDS],
      'every model, in catalogue order',
    );
    for (const model of models) {
      assert.equal(model.object, 'model', model.id);
      assert.equal(model.owned_by, 'videogen', model.id);
      assert.equal(typeof model.created, 'number', model.id);
      assert.equal(model.mode, modeOf(model.id as BuiltInModelId), model.id);
      assert.equal(model.fast, model.id.includes('-fast-'), model.id);
      assert.deepEqual(model.durations, [...DURATIONS], model.id);
      assert.deepEqual(model.qualities, [...QUALITIES], model.id);
      assert.deepEqual(model.aspect_ratios, [...ASPECT_RATIOS], model.id);
      assert.equal(model.available, true, `${model.id}: ${model.unavailable_reason}`);
      assert.equal('unavailable_reason' in model, false, model.id);
    }
    // The local engine takes every input, so each model takes what the catalogue allows.
    const inputsOf = (id: ModelId) => models.find((model) => model.id === id)?.inputs;
    assert.deepEqual(inputsOf('videogen-2.0-fast-text-to-video'), {});
    assert.deepEqual(inputsOf('videogen-2.0-image-to-video'), { image_urls: { min: 1, max: 2 } });
    assert.deepEqual(inputsOf('videogen-2.0-reference-to-video'), {
      image_urls: { min: 0, max: 9 },
      video_urls: { min: 0, max: 3 },
      audio_urls: { min: 0, max: 3 },
    });

    const one = await recorded.getModel('videogen-2.0-fast-image-to-video');
    const mode: 'image' = one.mode; // typed after the ID asked for
    assert.equal(mode, 'image');
    assert.deepEqual(
      one,
      models.find((model) => model.id === 'videogen-2.0-fast-image-to-video'),
    );
    assert.equal(recorder.paths().at(-1), 'GET /v1/models/videogen-2.0-fast-image-to-video');

    await assert.rejects(client.getModel('videogen-1.0-text-to-video' as ModelId), (error: unknown) => {
      assert.ok(error instanceof InvalidRequestError);
      assert.equal(error.code, 'model_not_found');
      assert.equal(error.status, 400);
      return true;
    });
    const stranger = new VideogenClient({
      baseUrl: server.url,
      apiKey: 'vg_dev_00000000000000000000000000000000',
    });
    for (const call of [() => stranger.listModels(), () => stranger.getModel('videogen-2.0-text-to-video')])
      await assert.rejects(call(), (error: unknown) => {
        assert.ok(error instanceof AuthenticationError);
        assert.equal(error.code, 'invalid_api_key');
        assert.equal(error.status, 401);
        return true;
      });
  });

  it('marks every model unavailable on a server with no worker running, with the reason', async () => {
    const models = await apiOnlyClient.listModels();
    assert.equal(models.length, MODEL_IDS.length);
    for (const model of models) {
      assert.equal(model.available, false, model.id);
      assert.match(model.unavailable_reason ?? '', /No worker serving this model is running/, model.id);
    }
  });

  it('sends an Idempotency-Key on every creation, so a repeat with the same key creates nothing new', async () => {
    const recorder = recordingFetch();
    const recorded = new VideogenClient({
      baseUrl: apiOnly.url,
      apiKey: apiOnly.apiKey,
      fetch: recorder.fetch,
    });
    await recorded.createTask(QUICK);
    await recorded.createTask(QUICK);
    const keys = recorder.sent.map((request) => request.headers.get('idempotency-key'));
    assert.equal(keys.length, 2);
    for (const key of keys)
      assert.match(key ?? '', /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.notEqual(keys[0], keys[1], 'each call has its own key');

    const idempotencyKey = crypto.randomUUID();
    const first = await apiOnlyClient.createTask(QUICK, { idempotencyKey });
    const again = await apiOnlyClient.createTask(QUICK, { idempotencyKey });
    assert.equal(again.id, first.id);
    await assert.rejects(
      apiOnlyClient.createTask({ ...QUICK, prompt: 'another body' }, { idempotencyKey }),
      (error: unknown) => error instanceof ConflictError && error.code === 'idempotency_conflict',
    );
  });

  it('generates a video whose MP4 downloads from results[0]', async () => {
    const task: CompletedTask<'videogen-2.0-fast-text-to-video'> = await client.generate(QUICK);
    assert.equal(task.status, 'completed');
    assert.equal(task.progress, 100);
    assert.equal(typeof task.completed_at, 'number');
    const response = await fetch(task.results[0]);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'video/mp4');
    const bytes = new Uint8Array(await response.arrayBuffer());
    assert.ok(bytes.length > 1000, `a video of ${bytes.length} bytes`);
    assert.equal(new TextDecoder().decode(bytes.subarray(4, 8)), 'ftyp', 'an ISO BMFF (MP4) file');
  });

  it('uploads an image and makes an image-to-video task of it', async () => {
    const png = solidPng(64, 48, [200, 30, 30]);
    const file = await client.uploadFile(new Blob([png], { type: 'image/png' }), { filename: 'red.png' });
    assert.match(file.id, /^file-/);
    assert.equal(file.object, 'file');
    assert.equal(file.kind, 'image');
    assert.equal(file.content_type, 'image/png');
    assert.equal(file.filename, 'red.png');
    assert.equal(file.bytes, png.length);
    const named = await client.uploadFile(new File([png], 'named.png', { type: 'image/png' }));
    assert.equal(named.filename, 'named.png', "a File's own name is used");

    const task = await client.generate({
      model: 'videogen-2.0-fast-image-to-video',
      prompt: 'image 1 slowly zooms',
      image_urls: [file.url, named.url],
      duration: 4,
      quality: '480p',
      aspect_ratio: '4:3',
    });
    assert.equal(task.status, 'completed');
    assert.equal(task.aspect_ratio, '4:3');

    await assert.rejects(
      client.uploadFile(new Blob(['just some text']), { filename: 'notes.txt' }),
      (error: unknown) =>
        error instanceof InvalidRequestError &&
        error.status === 415 &&
        error.code === 'unsupported_media_type',
    );
  });

  it('lists tasks newest first across pages, as pages or as tasks', async () => {
    const isolated = await isolatedClient();
    const created: string[] = [];
    for (let i = 0; i < 5; i++)
      created.push((await isolated.createTask({ ...QUICK, prompt: `kite ${i}` })).id);
    const newestFirst = [...created].reverse();

    const pages = [];
    for await (const page of isolated.listTasks({ limit: 2 }).pages()) pages.push(page);
    assert.deepEqual(
      pages.map((page) => page.data.length),
      [2, 2, 1],
    );
    assert.deepEqual(
      pages.map((page) => page.has_more),
      [true, true, false],
    );
    assert.equal(pages.at(-1)?.next_cursor, null);
    assert.deepEqual(
      pages.flatMap((page) => page.data.map((task) => task.id)),
      newestFirst,
    );

    const ids: string[] = [];
    for await (const task of isolated.listTasks({ limit: 2 })) ids.push(task.id);
    assert.deepEqual(ids, newestFirst);

    // Stopping early fetches no more pages.
    const recorder = recordingFetch();
    const key = (await apiOnly.cli(['keys', 'create', '--name', 'pager', '--env', 'production'])).trim();
    const recorded = new VideogenClient({ baseUrl: apiOnly.url, apiKey: key, fetch: recorder.fetch });
    for await (const task of recorded.listTasks({ limit: 2 })) {
      assert.equal(task.id, newestFirst[0]);
      break;
    }
    assert.equal(recorder.sent.length, 1);

    const filtered: Task[] = [];
    for await (const task of isolated.listTasks({ model: 'videogen-2.0-text-to-video' })) filtered.push(task);
    assert.deepEqual(filtered, []);
  });

  it('cancels a running task, and refuses to cancel or delete at the wrong time', async () => {
    const task = await client.createTask(SLOW);
    await assert.rejects(client.deleteTask(task.id), (error: unknown) => {
      assert.ok(error instanceof ConflictError);
      assert.equal(error.code, 'task_not_deletable');
      assert.equal(error.status, 409);
      assert.match(error.requestId ?? '', /^req_/);
      return true;
    });
    const cancelled = await client.cancelTask(task.id);
    assert.equal(cancelled.status, 'failed');
    assert.equal(cancelled.error.code, 'cancelled');
    await assert.rejects(
      client.cancelTask(task.id),
      (error: unknown) => error instanceof ConflictError && error.code === 'task_not_cancellable',
    );
    const deleted = await client.deleteTask(task.id);
    assert.deepEqual(deleted, { id: task.id, object: 'video.generation.task', deleted: true });
    await assert.rejects(client.getTask(task.id), (error: unknown) => {
      assert.ok(error instanceof NotFoundError);
      assert.equal(error.code, 'task_not_found');
      assert.equal(error.status, 404);
      assert.equal(error.param, 'task_id');
      return true;
    });
  });

  it('throws typed errors carrying code, status, requestId and param', async () => {
    const stranger = new VideogenClient({
      baseUrl: server.url,
      apiKey: 'vg_dev_00000000000000000000000000000000',
    });
    await assert.rejects(stranger.getTask('task-unified-x'), (error: unknown) => {
      assert.ok(error instanceof AuthenticationError);
      assert.ok(error instanceof VideogenError);
      assert.equal(error.code, 'invalid_api_key');
      assert.equal(error.status, 401);
      assert.equal(error.type, 'authentication_error');
      assert.match(error.requestId ?? '', /^req_/);
      return true;
    });
    await assert.rejects(client.createTask({ ...QUICK, prompt: '   ' }), (error: unknown) => {
      assert.ok(error instanceof InvalidRequestError);
      assert.equal(error.code, 'invalid_parameter');
      assert.equal(error.status, 400);
      assert.equal(error.param, 'prompt');
      return true;
    });
    await assert.rejects(
      client.createTask({ model: 'videogen-2.0-image-to-video', prompt: 'x', image_urls: ['not a url'] }),
      (error: unknown) => error instanceof InvalidRequestError && error.param === 'image_urls[0]',
    );
    await assert.rejects(
      client.getTask('task-unified-does-not-exist'),
      (error: unknown) => error instanceof NotFoundError && error.code === 'task_not_found',
    );
  });

  it('throws TaskFailedError from generate when the task fails', async () => {
    const missing = `${server.url}/does-not-exist.png`;
    await assert.rejects(
      client.generate({
        model: 'videogen-2.0-fast-image-to-video',
        prompt: 'x',
        image_urls: [missing],
        duration: 4,
      }),
      (error: unknown) => {
        assert.ok(error instanceof TaskFailedError);
        assert.equal(error.code, 'asset_fetch_failed');
        assert.equal(error.task.status, 'failed');
        assert.match(error.message, /image_urls\[0\]/);
        return true;
      },
    );
  });

  describe('waitForTask', () => {
    it('follows the event stream, reporting progress, with one request', async () => {
      const task = await client.createTask(MEDIUM);
      const recorder = recordingFetch();
      const recorded = new VideogenClient({
        baseUrl: server.url,
        apiKey: server.apiKey,
        fetch: recorder.fetch,
      });
      const seen: Task[] = [];
      const final = await recorded.waitForTask(task.id, {
        method: 'events',
        onProgress: (t) => seen.push(t),
      });
      assert.equal(final.status, 'completed');
      assert.deepEqual(recorder.paths(), [`GET /v1/tasks/${task.id}/events`]);
      assert.equal(recorder.sent[0]?.headers.get('accept'), 'text/event-stream');
      assert.ok(seen.length >= 3, `progress reported ${seen.length} times`);
      assert.equal(seen.at(-1)?.status, 'completed');
      assert.ok(
        seen.some((t) => t.status === 'processing' && t.progress > 0 && t.progress < 100),
        'progress on the way',
      );
      for (let i = 1; i < seen.length; i++)
        assert.ok((seen[i]?.progress ?? 0) >= (seen[i - 1]?.progress ?? 0));
    });

    it('polls with a growing interval when asked to', async () => {
      // A long render, cancelled once the first poll has seen it: the first poll cannot find it already final,
      // however late the test process gets to send it (a quick render could end before that on a loaded machine).
      const task = await client.createTask(SLOW);
      const recorder = recordingFetch();
      const recorded = new VideogenClient({
        baseUrl: server.url,
        apiKey: server.apiKey,
        fetch: recorder.fetch,
      });
      const seen: Task[] = [];
      let cancelled: Promise<unknown> | undefined;
      const final = await recorded.waitForTask(task.id, {
        method: 'poll',
        pollInterval: 200,
        maxPollInterval: 400,
        onProgress: (t) => {
          seen.push(t);
          cancelled ??= client.cancelTask(task.id);
        },
      });
      await cancelled;
      assert.equal(final.status, 'failed');
      assert.equal(final.error?.code, 'cancelled');
      assert.ok(recorder.sent.length >= 2);
      assert.ok(recorder.paths().every((path) => path === `GET /v1/tasks/${task.id}`));
      assert.ok(seen.length >= 2);
      assert.notEqual(seen[0]?.status, 'failed');
      assert.equal(seen.at(-1)?.status, 'failed');
    });

    it('falls back to polling on a server without the events route', async () => {
      const task = await client.createTask(QUICK);
      const recorder = recordingFetch((request) =>
        request.url.pathname.endsWith('/events')
          ? apiErrorResponse(404, 'not_found', 'not_found_error')
          : undefined,
      );
      const recorded = new VideogenClient({
        baseUrl: server.url,
        apiKey: server.apiKey,
        fetch: recorder.fetch,
      });
      const final = await recorded.waitForTask(task.id, { pollInterval: 100 });
      assert.equal(final.status, 'completed');
      assert.equal(recorder.paths()[0], `GET /v1/tasks/${task.id}/events`);
      assert.ok(
        recorder
          .paths()
          .slice(1)
          .every((path) => path === `GET /v1/tasks/${task.id}`),
      );
    });

    it('answers a failed task rather than throwing, and throws for an unknown one', async () => {
      const task = await client.createTask(SLOW);
      await client.cancelTask(task.id);
      const final = await client.waitForTask(task.id);
      assert.equal(final.status, 'failed');
      assert.equal(final.status === 'failed' && final.error.code, 'cancelled');
      await assert.rejects(
        client.waitForTask('task-unified-nope'),
        (error: unknown) => error instanceof NotFoundError && error.code === 'task_not_found',
      );
    });

    describe('aborted', () => {
      // On the server with no worker: a task stays pending for ever, so only the abort ends a wait for it (a
      // wait that ignored it would end by the test's time limit, and a poll would come every 10 minutes).
      for (const method of ['events', 'poll'] as const) {
        it(`stops at once when aborted (${method})`, { timeout: 120_000 }, async () => {
          const task = await apiOnlyClient.createTask(QUICK);
          const controller = new AbortController();
          const started = Date.now();
          const waiting = apiOnlyClient.waitForTask(task.id, {
            method,
            signal: controller.signal,
            pollInterval: 600_000,
          });
          setTimeout(() => controller.abort(), 300);
          await assert.rejects(waiting, (error: unknown) => (error as Error).name === 'AbortError');
          assert.ok(Date.now() - started < 60_000, `aborted after ${Date.now() - started} ms`);
        });
      }
    });

    it('rejects with the reason of an aborted signal', async () => {
      const recorder = recordingFetch();
      const recorded = new VideogenClient({
        baseUrl: server.url,
        apiKey: server.apiKey,
        fetch: recorder.fetch,
      });
      const reason = new Error('no longer needed');
      await assert.rejects(recorded.createTask(QUICK, { signal: AbortSignal.abort(reason) }), reason);
      await assert.rejects(recorded.generate(QUICK, { signal: AbortSignal.timeout(1) }), (error: unknown) =>
        ['AbortError', 'TimeoutError'].includes((error as Error).name),
      );
    });
  });
});

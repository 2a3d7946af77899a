/**
 * Live progress and waiting, through real HTTP with a worker rendering real tasks: the Server-Sent Events of
 * `GET /v1/tasks/{task_id}/events` (in order, ending with the final state, stopping when the client goes),
 * and `Prefer: wait=N` on creation and query.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { PublicTask, TaskStatus } from '../src/domain/task.js';
import { MAX_WAIT_SECONDS, parsePreferWait } from '../src/http/prefer-wait.js';
import { eventStream } from '../src/http/routes/task-events.js';
import { watchTask } from '../src/tasks/task-watch.js';
import { Api, type ErrorBody } from './helpers/api.js';
import { follow, metric, openStream, tasksOf, within } from './helpers/event-streams.js';
import { startTestService, type TestService } from './helpers/test-service.js';
import { until } from './helpers/until.js';

const FAST = { model: 'videogen-2.0-fast-text-to-video', prompt: 'a red kite', duration: 4, quality: '480p' };
/** A render long enough to still be running a few seconds after it starts. */
const LONG = { model: 'videogen-2.0-text-to-video', prompt: 'a long one', duration: 15, quality: '1080p' };
const STATUS_ORDER: Record<TaskStatus, number> = { pending: 0, processing: 1, completed: 2, failed: 2 };
const FINAL = new Set(['completed', 'failed']);

let server: TestService;
let api: Api;
let key: string;

before(async () => {
  server = await startTestService({ VIDEOGEN_WORKER_CONCURRENCY: '1' });
  key = (await server.newKey()).key;
  api = new Api(server.url, key);
});
after(() => server.close());

/** Counts the event streams' reads of the store (one read for all the tasks they watch), by task. */
function countWatchReads(): { including(taskId: string): number; restore(): void } {
  const store = server.service.store;
  const original = store.getTasks;
  const reads: (readonly string[])[] = [];
  store.getTasks = (ids) => {
    reads.push([...ids]);
    return original.call(store, ids);
  };
  return {
    including: (taskId) => reads.filter((ids) => ids.includes(taskId)).length,
    restore: () => {
      store.getTasks = original;
    },
  };
}

describe('GET /v1/tasks/{task_id}/events', () => {
  it('SSE events arrive in order and end with the final state', async () => {
    const created = await api.create(FAST);
    assert.equal(created.status, 200);
    const stream = await openStream(`${server.url}/v1/tasks/${created.body.id}/events`, key);
    assert.equal(stream.response.status, 200);
    assert.equal(stream.response.headers.get('content-type'), 'text/event-stream');
    assert.equal(stream.response.headers.get('cache-control'), 'no-cache');
    assert.equal(stream.response.headers.get('x-accel-buffering'), 'no');
    assert.match(stream.response.headers.get('x-request-id') ?? '', /^req_/);
    assert.ok(stream.response.headers.get('ratelimit-remaining'));

    await within(stream.ended, 90_000, 'the stream');
    const tasks = tasksOf(stream);
    // A 4 s 480p render takes about half a second: how many progress steps a 250 ms poll catches varies.
    assert.ok(tasks.length >= 2, `only ${tasks.length} events`);
    // That the first event is sent before any change is watchTask's (below), timed by no clock.
    assert.ok(!FINAL.has(tasks[0]?.status ?? 'completed'), 'the first event is the task as created');
    assert.ok(
      stream.events.every((event) => event.event === 'task'),
      'every event is a task event',
    );
    // The ids are the task's revisions: whole numbers, unique and increasing.
    const ids = stream.events.map((event) => Number(event.id));
    assert.ok(
      ids.every((id, i) => Number.isSafeInteger(id) && id > 0 && (i === 0 || id > (ids[i - 1] ?? 0))),
      `ids ${stream.events.map((event) => event.id).join(', ')}`,
    );
    for (const [i, task] of tasks.entries()) {
      assert.equal(task.id, created.body.id);
      const previous = tasks[i - 1];
      if (!previous) continue;
      assert.ok(
        STATUS_ORDER[task.status] >= STATUS_ORDER[previous.status],
        `${previous.status} → ${task.status}`,
      );
      assert.ok(task.progress >= previous.progress, `progress ${previous.progress} → ${task.progress}`);
      assert.ok(
        task.status !== previous.status || task.progress !== previous.progress,
        `event ${i + 1} repeats the one before`,
      );
      assert.ok(!FINAL.has(previous.status), 'an event after the final one');
    }
    const last = tasks.at(-1);
    assert.equal(last?.status, 'completed');
    assert.equal(last?.progress, 100);
    assert.equal(last?.results?.length, 1);
    // The data is the task as the query answers it.
    assert.deepEqual(last, (await api.get(created.body.id)).body);

    // The stream ended through Fastify's usual path: onResponse counted it.
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    assert.match(
      metrics,
      /videogen_http_request_duration_seconds_count\{[^}]*route="\/v1\/tasks\/:task_id\/events"[^}]*status_code="200"[^}]*\} [1-9]/,
    );
  });

  it('gives one event for a task already final, and ends', async () => {
    const created = await api.create(FAST);
    const final = await api.waitForFinal(created.body.id, 60_000);
    const stream = await openStream(`${server.url}/v1/tasks/${created.body.id}/events`, key);
    await within(stream.ended, 30_000, 'the stream of a final task');
    assert.deepEqual(tasksOf(stream), [final]);
    assert.match(stream.events[0]?.id ?? '', /^[1-9][0-9]*$/);
  });

  it('answers 404 for an unknown task and 401 without a valid key, with JSON error bodies', async () => {
    const unknown = await api.request<ErrorBody>(
      'GET',
      '/v1/tasks/task-unified-00000000000000000000000000/events',
    );
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'task_not_found');
    assert.match(unknown.headers.get('content-type') ?? '', /^application\/json/);

    const { body: task } = await api.create(FAST);
    const anonymous = await api.withKey(undefined).request<ErrorBody>('GET', `/v1/tasks/${task.id}/events`);
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.body.error.code, 'missing_api_key');
    const wrong = await api.withKey('vg_dev_nope').request<ErrorBody>('GET', `/v1/tasks/${task.id}/events`);
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body.error.code, 'invalid_api_key');
    // Another account's task does not exist for this key.
    const other = new Api(server.url, (await server.newKey()).key);
    assert.equal((await other.request('GET', `/v1/tasks/${task.id}/events`)).status, 404);
    await api.waitForFinal(task.id, 60_000);
  });

  it('stops watching the task when the client disconnects', async () => {
    const { body: long } = await api.create(LONG);
    const reads = countWatchReads();
    const open = 'videogen_event_streams_open';
    const before = await metric(server.url, open);
    try {
      const client = new AbortController();
      const stream = await openStream(`${server.url}/v1/tasks/${long.id}/events`, key, client.signal);
      await until(
        () => stream.events.length >= 1 && reads.including(long.id) >= 1,
        'the stream watching the task',
      );
      assert.equal(await metric(server.url, open), before + 1);
      client.abort();
      await stream.ended.catch(() => {});
      await until(async () => (await metric(server.url, open)) === before, 'the watch ending');
      // A read for another stream, made after this one ended, leaves its task out.
      const { body: other } = await api.create(LONG);
      const watching = new AbortController();
      const next = await openStream(`${server.url}/v1/tasks/${other.id}/events`, key, watching.signal);
      const readsOfLong = reads.including(long.id);
      await until(() => reads.including(other.id) >= 1, 'a read for the other stream');
      assert.equal(reads.including(long.id), readsOfLong, 'the task of the ended stream is read no more');
      watching.abort();
      await next.ended.catch(() => {});
      await api.request('POST', `/v1/tasks/${other.id}/cancel`);
    } finally {
      reads.restore();
      await api.request('POST', `/v1/tasks/${long.id}/cancel`);
    }
  });
});

describe('reconnecting to GET /v1/tasks/{task_id}/events', () => {
  it('gives EventSource each state once, then answers its reconnection after the final event 204, which stops it', async () => {
    const { body: task } = await api.create(FAST);
    const followed = follow(`${server.url}/v1/tasks/${task.id}/events`, key);
    try {
      // EventSource reconnects 3 s after the stream ends; the 204 is what stops it.
      await within(followed.closed, 90_000, 'EventSource giving up');
    } finally {
      followed.source.close();
    }
    const ids = followed.events.map((event) => Number(event.id));
    assert.ok(
      ids.every((id, i) => Number.isSafeInteger(id) && (i === 0 || id > (ids[i - 1] ?? 0))),
      `ids ${ids.join(', ')}`,
    );
    const statuses = followed.events.map((event) => event.task.status);
    assert.equal(statuses.filter((status) => FINAL.has(status)).length, 1, statuses.join(', '));
    assert.equal(followed.events.at(-1)?.task.status, 'completed');
    assert.deepEqual(followed.requests, [
      { lastEventId: undefined, status: 200 },
      { lastEventId: followed.events.at(-1)?.id, status: 204 },
    ]);
  });
});

describe('Last-Event-ID', () => {
  let own: TestService;
  let ownKey: string;
  before(async () => {
    // No worker, and no poll to speak of: only the change signal can bring a cancellation to a stream.
    own = await startTestService({}, { watchFallbackMs: 600_000 });
    ownKey = (await own.newKey()).key;
  });
  after(() => own.close());

  it('resumes after the id it names, sends nothing at or before it, and is 204 once the final one is had', async () => {
    const ownApi = new Api(own.url, ownKey);
    const { body: task } = await ownApi.create(FAST);
    const url = `${own.url}/v1/tasks/${task.id}/events`;
    const first = new AbortController();
    const opened = await openStream(url, ownKey, first.signal);
    await until(() => opened.events.length === 1, 'the first event');
    const pendingId = opened.events[0]?.id ?? '';
    first.abort();
    await opened.ended.catch(() => {});

    const resumed = await openStream(url, ownKey, undefined, { 'last-event-id': pendingId });
    assert.equal(resumed.response.status, 200);
    // The watch is open once the store has been read for it; the cancellation then reaches it by the signal.
    await until(
      async () => (await metric(own.url, 'videogen_event_streams_open')) === 1,
      'the resumed stream watching the task',
    );
    assert.equal((await ownApi.request('POST', `/v1/tasks/${task.id}/cancel`)).status, 200);
    await within(resumed.ended, 30_000, 'the resumed stream');
    assert.deepEqual(
      tasksOf(resumed).map((t) => t.status),
      ['failed'],
    );
    const finalId = resumed.events[0]?.id ?? '';
    assert.ok(Number(finalId) > Number(pendingId), `${finalId} after ${pendingId}`);

    const done = await fetch(url, {
      headers: { authorization: `Bearer ${ownKey}`, 'last-event-id': finalId },
    });
    assert.equal(done.status, 204);
    assert.equal(await done.text(), '');
    // An older id gets the final state; one never handed out, or no id at all, the same.
    for (const lastEventId of [pendingId, String(Number(finalId) + 100), 'not-an-id']) {
      const again = await openStream(url, ownKey, undefined, { 'last-event-id': lastEventId });
      await within(again.ended, 30_000, `the stream after ${lastEventId}`);
      assert.deepEqual(
        again.events.map((event) => [event.id, JSON.parse(event.data ?? '{}').status]),
        [[finalId, 'failed']],
        lastEventId,
      );
    }
  });
});

describe('eventStream', () => {
  it('writes keep-alive comments while nothing changes, and ends with its events', async () => {
    // The second event waits until the reader has seen two keep-alives: no timing to get wrong under load.
    let seenTwo!: () => void;
    const twoKeepAlives = new Promise<void>((resolve) => {
      seenTwo = resolve;
    });
    async function* events() {
      yield { id: 1, data: { n: 1 } };
      await twoKeepAlives;
      yield { id: 4, data: { n: 2 } };
    }
    let text = '';
    for await (const chunk of eventStream(events(), {
      keepAliveMs: 10,
      onError: (e) => assert.fail(String(e)),
    })) {
      text += chunk;
      if ((text.match(/: keep-alive\n\n/g) ?? []).length >= 2) seenTwo();
    }
    assert.match(
      text,
      /^event: task\nid: 1\ndata: \{"n":1\}\n\n(: keep-alive\n\n){2,}event: task\nid: 4\ndata: \{"n":2\}\n\n$/,
    );
  });

  it('begins with the reconnection time when given one, so that its headers go out before any event', async () => {
    async function* events() {
      yield { id: 9, data: { n: 1 } };
    }
    let text = '';
    for await (const chunk of eventStream(events(), {
      keepAliveMs: 600_000,
      retryMs: 3000,
      onError: (e) => assert.fail(String(e)),
    }))
      text += chunk;
    assert.equal(text, 'retry: 3000\n\nevent: task\nid: 9\ndata: {"n":1}\n\n');
  });

  it('ends, reporting the error, when its events fail', async () => {
    async function* events() {
      yield { id: 1, data: { n: 1 } };
      throw new Error('store down');
    }
    const errors: unknown[] = [];
    let text = '';
    for await (const chunk of eventStream(events(), { keepAliveMs: 1000, onError: (e) => errors.push(e) }))
      text += chunk;
    assert.equal(text, 'event: task\nid: 1\ndata: {"n":1}\n\n');
    assert.equal((errors[0] as Error).message, 'store down');
  });
});

describe('watchTask', () => {
  it('yields changes only, stops after a final status, and stops when its signal fires', async () => {
    const states: PublicTask['status'][] = ['pending', 'pending', 'processing', 'processing', 'completed'];
    let i = 0;
    const load = async () => ({
      status: states[Math.min(i++, states.length - 1)] as TaskStatus,
      progress: 0,
    });
    const seen: string[] = [];
    for await (const task of watchTask(load, { intervalMs: 5 })) seen.push(task.status);
    assert.deepEqual(seen, ['pending', 'processing', 'completed']);

    const stop = new AbortController();
    const running: number[] = [];
    const started = Date.now();
    setTimeout(() => stop.abort(), 50);
    for await (const task of watchTask(async () => ({ status: 'processing' as const, progress: 5 }), {
      signal: stop.signal,
      intervalMs: 600_000,
    }))
      running.push(task.progress);
    assert.deepEqual(running, [5]);
    // Bounds are far from any machine's speed: without the abort the loop would sleep 10 minutes.
    assert.ok(Date.now() - started < 60_000, 'the abort interrupts the sleep');
  });
});

describe('Prefer: wait', () => {
  it('parses the wait preference among others, clamps it, and ignores a malformed one', () => {
    assert.equal(parsePreferWait(undefined), undefined);
    assert.equal(parsePreferWait('wait=5'), 5);
    assert.equal(parsePreferWait('Wait = 7'), 7);
    assert.equal(parsePreferWait('respond-async, wait=10'), 10);
    assert.equal(parsePreferWait('return=minimal; wait=3'), 3);
    assert.equal(parsePreferWait('wait="4"'), 4);
    assert.equal(parsePreferWait(['handling=lenient', 'wait=2']), 2);
    assert.equal(parsePreferWait('wait=600'), MAX_WAIT_SECONDS);
    assert.equal(parsePreferWait('wait=0'), 0);
    assert.equal(parsePreferWait('wait=1, wait=9'), 1, 'only the first instance counts');
    for (const bad of [
      'wait',
      'wait=',
      'wait=soon',
      'wait=-1',
      'wait=1.5',
      'respond-async',
      'foo="wait=5"',
      '',
    ]) {
      assert.equal(parsePreferWait(bad), undefined, bad);
    }
  });

  it('on creation, answers the completed task when it finishes within the wait', async () => {
    const started = Date.now();
    const created = await api.request<PublicTask>('POST', '/v1/videos/generations', {
      body: FAST,
      headers: { prefer: 'wait=30' },
    });
    assert.equal(created.status, 200);
    assert.equal(created.headers.get('preference-applied'), 'wait=30');
    assert.equal(created.body.status, 'completed', `after ${Date.now() - started} ms`);
    assert.equal(created.body.results?.length, 1);
  });

  it('on creation and query, answers a running task as it is when the wait runs out', async () => {
    let started = Date.now();
    const created = await api.request<PublicTask>('POST', '/v1/videos/generations', {
      body: LONG,
      headers: { prefer: 'wait=1' },
    });
    let took = Date.now() - started;
    try {
      assert.equal(created.status, 200);
      assert.equal(created.headers.get('preference-applied'), 'wait=1');
      assert.ok(took >= 950, `answered after ${took} ms`);
      assert.ok(!FINAL.has(created.body.status), 'answered when the wait ran out, not at the end');

      started = Date.now();
      const queried = await api.request<PublicTask>('GET', `/v1/tasks/${created.body.id}`, {
        headers: { prefer: 'wait=1' },
      });
      took = Date.now() - started;
      assert.equal(queried.status, 200);
      assert.equal(queried.headers.get('preference-applied'), 'wait=1');
      assert.ok(took >= 950, `answered after ${took} ms`);
      assert.ok(!FINAL.has(queried.body.status), 'answered when the wait ran out, not at the end');

      // A malformed preference is ignored: the answer comes without Preference-Applied.
      const ignored = await api.request<PublicTask>('GET', `/v1/tasks/${created.body.id}`, {
        headers: { prefer: 'wait=soon' },
      });
      assert.equal(ignored.status, 200);
      assert.equal(ignored.headers.get('preference-applied'), null);
    } finally {
      await api.request('POST', `/v1/tasks/${created.body.id}/cancel`);
    }
  });

  it('on query, answers once the task completes, and clamps a wait over 60 s', async () => {
    const { body: task } = await api.create(FAST);
    const queried = await api.request<PublicTask>('GET', `/v1/tasks/${task.id}`, {
      headers: { prefer: 'wait=30' },
    });
    assert.equal(queried.status, 200);
    assert.equal(queried.headers.get('preference-applied'), 'wait=30');
    assert.equal(queried.body.status, 'completed');
    assert.equal(queried.body.results?.length, 1);

    // A final task is answered at once, whatever the wait.
    const started = Date.now();
    const again = await api.request<PublicTask>('GET', `/v1/tasks/${task.id}`, {
      headers: { prefer: 'respond-async, wait=600' },
    });
    assert.equal(again.headers.get('preference-applied'), 'wait=60');
    assert.ok(Date.now() - started < 30_000, 'not held for the 60 s wait');
    assert.deepEqual(again.body, queried.body);
  });

  it('answers 404 at once for an unknown task, wait or not', async () => {
    const started = Date.now();
    const unknown = await api.request<ErrorBody>('GET', '/v1/tasks/task-unified-00000000000000000000000000', {
      headers: { prefer: 'wait=60' },
    });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'task_not_found');
    assert.ok(Date.now() - started < 30_000, 'not held for the 60 s wait');
  });
});

describe('shutdown', () => {
  it('ends open streams and waits at once, without holding the close up', async () => {
    // No worker: the task stays pending, so only the shutdown can end the answers.
    const own = await startTestService();
    let closed = false;
    try {
      const ownKey = (await own.newKey()).key;
      const { body: task } = await new Api(own.url, ownKey).create(FAST);
      const stream = await openStream(`${own.url}/v1/tasks/${task.id}/events`, ownKey);
      const waiting = new Api(own.url, ownKey).request<PublicTask>('GET', `/v1/tasks/${task.id}`, {
        headers: { prefer: 'wait=60' },
      });
      const inFlight = (route: string) =>
        metric(own.url, `videogen_http_requests_in_flight{route="${route}"}`);
      await until(
        async () =>
          stream.events.length === 1 &&
          (await inFlight('/v1/tasks/:task_id/events')) === 1 &&
          (await inFlight('/v1/tasks/:task_id')) === 1,
        'the stream and the wait being answered',
      );
      // Well under the 60 s the wait asked for: the close answers it rather than waiting it out.
      await within(own.close(), 30_000, 'closing the server');
      closed = true;

      await within(stream.ended, 30_000, 'the stream');
      assert.deepEqual(
        tasksOf(stream).map((t) => t.status),
        ['pending'],
      );
      const waited = await waiting;
      assert.equal(waited.status, 200);
      assert.equal(waited.body.status, 'pending');
      assert.equal(waited.headers.get('connection'), 'close');
    } finally {
      if (!closed) await own.close();
    }
  });
});

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
import { startTestService, type TestService } from './helpers/test-service.js';
import { until } from './helpers/until.js';

const FAST = { model: 'videogen-2.0-fast-text-to-video', prompt: 'a red kite', duration: 4, quality: '480p' };
/** A render long enough to still be running a few seconds after it starts. */
const LONG = { model: 'videogen-2.0-text-to-video', prompt: 'a long one', duration: 15, quality: '1080p' };
const STATUS_ORDER: Record<TaskStatus, number> = { pending: 0, processing: 1, completed: 2, failed: 2 };
const FINAL = new Set(['completed', 'failed']);

interface SseEvent {
  event?: string;
  id?: string;
  data?: string;
}
interface Stream {
  response: Response;
  events: SseEvent[];
  comments: string[];
  /** Resolves when the server ends the stream (rejects when it is cut off). */
  ended: Promise<void>;
}

/** Opens an event stream with fetch and parses it as it arrives. */
async function openStream(url: string, key: string | undefined, signal?: AbortSignal): Promise<Stream> {
  const response = await fetch(url, {
    headers: key ? { authorization: `Bearer ${key}`, accept: 'text/event-stream' } : {},
    signal,
  });
  const events: SseEvent[] = [];
  const comments: string[] = [];
  const ended = (async () => {
    if (!response.body) return;
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of response.body) {
      buffer += decoder.decode(chunk, { stream: true });
      let end = buffer.indexOf('\n\n');
      while (end !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event: SseEvent = {};
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) comments.push(line);
          const match = /^(event|id|data): ?(.*)$/.exec(line);
          if (match) event[match[1] as 'event' | 'id' | 'data'] = match[2];
        }
        if (event.event || event.data) events.push(event);
        end = buffer.indexOf('\n\n');
      }
    }
    assert.equal(buffer, '', 'the stream ended in the middle of an event');
  })();
  return { response, events, comments, ended };
}

const tasksOf = (stream: Stream) => stream.events.map((event) => JSON.parse(event.data ?? '') as PublicTask);

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took more than ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** A value of the server's /metrics (0 when the series is absent). */
async function metric(url: string, series: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

let server: TestService;
let api: Api;
let key: string;

before(async () => {
  server = await startTestService({ VIDEOGEN_WORKER_CONCURRENCY: '1' });
  key = (await server.newKey()).key;
  api = new Api(server.url, key);
});
after(() => server.close());

/** Counts the API's reads of `taskId` (with a scope: the worker's own reads have none). */
function countReads(taskId: string): { readonly count: number; restore(): void } {
  const store = server.service.store;
  const original = store.getTask;
  let count = 0;
  store.getTask = (id, scope) => {
    if (id === taskId && scope) count += 1;
    return original.call(store, id, scope);
  };
  return {
    get count() {
      return count;
    },
    restore: () => {
      store.getTask = original;
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
    assert.deepEqual(
      stream.events.map((event) => [event.event, event.id]),
      tasks.map((_, i) => ['task', String(i + 1)]),
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
    assert.equal(stream.events[0]?.id, '1');
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

  it('stops polling the store when the client disconnects', async () => {
    const { body: long } = await api.create(LONG);
    const reads = countReads(long.id);
    const open = 'videogen_event_streams_open';
    const before = await metric(server.url, open);
    try {
      const client = new AbortController();
      const stream = await openStream(`${server.url}/v1/tasks/${long.id}/events`, key, client.signal);
      await until(() => stream.events.length >= 1 && reads.count >= 2, 'the stream polling the task');
      assert.equal(await metric(server.url, open), before + 1);
      client.abort();
      await stream.ended.catch(() => {});
      // The gauge drops once the stream's loop over the task has returned: it reads nothing after that.
      await until(async () => (await metric(server.url, open)) === before, 'the watch ending');
    } finally {
      reads.restore();
      await api.request('POST', `/v1/tasks/${long.id}/cancel`);
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
      yield { n: 1 };
      await twoKeepAlives;
      yield { n: 2 };
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
      /^event: task\nid: 1\ndata: \{"n":1\}\n\n(: keep-alive\n\n){2,}event: task\nid: 2\ndata: \{"n":2\}\n\n$/,
    );
  });

  it('ends, reporting the error, when its events fail', async () => {
    async function* events() {
      yield { n: 1 };
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

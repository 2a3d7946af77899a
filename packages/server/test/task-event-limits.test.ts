/**
 * What an event stream costs the server, through real HTTP: open streams capped per key and per process (429
 * with Retry-After), each stream ended after its lifetime (EventSource reconnects and resumes), one store read
 * for every watched task rather than one per stream every 250 ms, and changes brought to streams by the change
 * signal, on SQLite in the process and on PostgreSQL from another process.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Api, type ErrorBody } from './helpers/api.js';
import { follow, metric, openStream, type Stream, tasksOf, within } from './helpers/event-streams.js';
import { freshSchemas, postgresSuite, TEST_DATABASE_URL } from './helpers/postgres.js';
import { startTestService, type TestService } from './helpers/test-service.js';
import { until } from './helpers/until.js';

const TASK = { model: 'videogen-2.0-fast-text-to-video', prompt: 'a red kite', duration: 4, quality: '480p' };
/** Longer than any test waits: what reaches a stream here was brought by the change signal. */
const NO_POLL = { watchFallbackMs: 600_000 };
const OPEN = 'videogen_event_streams_open';

/** Streams opened here, cut off when the file ends. */
const clients: AbortController[] = [];
after(() => {
  for (const client of clients) client.abort();
});

async function open(url: string, key: string): Promise<Stream & { close(): void }> {
  const client = new AbortController();
  clients.push(client);
  const stream = await openStream(url, key, client.signal);
  stream.ended.catch(() => {});
  return { ...stream, close: () => client.abort() };
}

describe('event stream caps', () => {
  let server: TestService;
  before(async () => {
    server = await startTestService({
      VIDEOGEN_EVENT_STREAMS_PER_KEY: '2',
      VIDEOGEN_EVENT_STREAMS_PER_PROCESS: '3',
    });
  });
  after(() => server.close());

  it('answers 429 rate_limited with Retry-After past the per-key and the per-process cap', async () => {
    const [a, b, c] = await Promise.all([server.newKey(), server.newKey(), server.newKey()]);
    const urlOf = async (key: string) => {
      const { body: task } = await new Api(server.url, key).create(TASK);
      return `${server.url}/v1/tasks/${task.id}/events`;
    };
    const [urlOfA, urlOfB, urlOfC] = await Promise.all([urlOf(a.key), urlOf(b.key), urlOf(c.key)]);
    const refusal = async (url: string, key: string) => {
      const response = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
      const body = (await response.json()) as ErrorBody;
      assert.equal(response.status, 429);
      assert.equal(body.error.code, 'rate_limited');
      assert.equal(body.error.type, 'rate_limit_error');
      assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
      const retryAfter = Number(response.headers.get('retry-after'));
      assert.ok(
        Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 30,
        `Retry-After ${retryAfter}`,
      );
    };

    const first = await open(urlOfA, a.key);
    const second = await open(urlOfA, a.key);
    assert.deepEqual([first.response.status, second.response.status], [200, 200]);
    await refusal(urlOfA, a.key);
    // Another key still gets one: the process has room for three, and then none.
    const third = await open(urlOfB, b.key);
    assert.equal(third.response.status, 200);
    await refusal(urlOfC, c.key);

    // A stream that ends gives its place back.
    first.close();
    await until(async () => (await metric(server.url, OPEN)) === 2, 'the closed stream ending');
    const again = await open(urlOfA, a.key);
    assert.equal(again.response.status, 200);
    for (const stream of [second, third, again]) stream.close();
  });
});

describe('event stream lifetime', () => {
  let server: TestService;
  let api: Api;
  let key: string;
  before(async () => {
    server = await startTestService({ VIDEOGEN_EVENT_STREAM_LIFETIME_SECONDS: '1' }, NO_POLL);
    key = (await server.newKey()).key;
    api = new Api(server.url, key);
  });
  after(() => server.close());

  it('ends a stream after its lifetime; EventSource reconnects with Last-Event-ID and gets each state once', async () => {
    const { body: task } = await api.create(TASK);
    const followed = follow(`${server.url}/v1/tasks/${task.id}/events`, key);
    try {
      // No worker: the task stays pending, and only the lifetime ends the first stream.
      await until(() => followed.requests.length >= 2, 'EventSource reconnecting', { timeoutMs: 60_000 });
      const pendingId = followed.events[0]?.id;
      assert.deepEqual(followed.requests[1], { lastEventId: pendingId, status: 200 });
      assert.equal((await api.request('POST', `/v1/tasks/${task.id}/cancel`)).status, 200);
      await within(followed.closed, 60_000, 'EventSource giving up after the final event');
    } finally {
      followed.source.close();
    }
    assert.deepEqual(
      followed.events.map((event) => event.task.status),
      ['pending', 'failed'],
    );
    const last = followed.requests.at(-1);
    assert.deepEqual(last, { lastEventId: followed.events[1]?.id, status: 204 });
  });
});

describe('event stream store reads', () => {
  let server: TestService;
  before(async () => {
    server = await startTestService({}, NO_POLL);
  });
  after(() => server.close());

  it('reads every watched task in one read when something changes, and never per stream', async () => {
    const { key } = await server.newKey();
    const api = new Api(server.url, key);
    const tasks = await Promise.all(Array.from({ length: 20 }, async () => (await api.create(TASK)).body));
    const streams = await Promise.all(
      tasks.map((task) => open(`${server.url}/v1/tasks/${task.id}/events`, key)),
    );
    await until(() => streams.every((stream) => stream.events.length === 1), 'every first event');

    const store = server.service.store;
    const { getTask, getTasks } = store;
    const single: string[] = [];
    const batched: (readonly string[])[] = [];
    store.getTask = (id, scope) => {
      single.push(id);
      return getTask.call(store, id, scope);
    };
    store.getTasks = (ids) => {
      batched.push([...ids]);
      return getTasks.call(store, ids);
    };
    try {
      const [cancelled] = tasks;
      assert.ok(cancelled);
      assert.equal((await api.request('POST', `/v1/tasks/${cancelled.id}/cancel`)).status, 200);
      await within(streams[0]?.ended ?? Promise.resolve(), 30_000, 'the cancelled task’s stream');
      assert.deepEqual(
        tasksOf(streams[0] as Stream).map((task) => task.status),
        ['pending', 'failed'],
      );
    } finally {
      store.getTask = getTask;
      store.getTasks = getTasks;
    }
    // Each stream read its task every 250 ms: 20 streams, 80 reads a second. Now the change was one read of all.
    assert.deepEqual(single, [], 'no stream reads its own task');
    assert.ok(batched.length >= 1 && batched.length <= 3, `${batched.length} reads`);
    for (const ids of batched) {
      assert.deepEqual([...ids].sort(), tasks.map((task) => task.id).sort());
    }
    for (const stream of streams) stream.close();
  });
});

describe('event streams on PostgreSQL', async () => {
  const suite = await postgresSuite();
  const schema = freshSchemas();

  describe('across processes', suite, () => {
    let first: TestService;
    let second: TestService;
    before(async () => {
      const env = { VIDEOGEN_DATABASE_URL: TEST_DATABASE_URL, VIDEOGEN_DATABASE_SCHEMA: schema() };
      first = await startTestService(env, NO_POLL);
      second = await startTestService(env, NO_POLL);
    });
    after(async () => {
      await first?.close();
      await second?.close();
    });

    it("brings a change made by another process to an open stream, through PostgreSQL's NOTIFY", async () => {
      const { key } = await first.newKey();
      const { body: task } = await new Api(first.url, key).create(TASK);
      const stream = await open(`${first.url}/v1/tasks/${task.id}/events`, key);
      await until(() => stream.events.length === 1, 'the first event');
      await until(async () => (await metric(first.url, OPEN)) === 1, 'the stream watching its task');
      assert.equal(
        (await new Api(second.url, key).request('POST', `/v1/tasks/${task.id}/cancel`)).status,
        200,
      );
      await within(stream.ended, 30_000, 'the stream');
      assert.deepEqual(
        tasksOf(stream).map((t) => t.status),
        ['pending', 'failed'],
      );
      const ids = stream.events.map((event) => Number(event.id));
      assert.ok((ids[1] ?? 0) > (ids[0] ?? 0), `ids ${ids.join(', ')}`);
    });
  });
});

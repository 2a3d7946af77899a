/**
 * Retries: a real server's 429 (a rate limit of one request per five-second window) waited out by its
 * `Retry-After`; 5xx answers and broken connections injected in front of the real server; what is and is
 * not repeated; idempotent creations that cannot create twice; timeouts; aborting a retry's wait.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  ConflictError,
  ConnectionError,
  RateLimitError,
  RequestTimeoutError,
  ServerError,
  type Task,
  VideogenClient,
} from '../src/index.js';
import { apiErrorResponse, jsonResponse, recordingFetch } from './helpers/recording-fetch.js';
import { startServer, type TestServer } from './helpers/server.js';

const QUICK = {
  model: 'videogen-2.0-fast-text-to-video',
  prompt: 'a red kite',
  duration: 4,
  quality: '480p',
} as const;
const FAST_BACKOFF = { initialDelayMs: 10, maxDelayMs: 40 };

async function allTasks(client: VideogenClient): Promise<Task[]> {
  const tasks: Task[] = [];
  for await (const task of client.listTasks({ limit: 100 })) tasks.push(task);
  return tasks;
}

describe('retries against a rate-limited server', () => {
  let server: TestServer;

  before(async () => {
    // One request per key per 5-second window, which starts at the key's first request: a test's next request
    // comes far sooner than that on any machine.
    server = await startServer({
      VIDEOGEN_RATE_LIMIT_PER_MINUTE: '12',
      VIDEOGEN_RATE_LIMIT_WINDOW_SECONDS: '5',
    });
  });
  after(async () => {
    await server?.stop();
  });

  it('throws RateLimitError with Retry-After when retries are off', async () => {
    const client = new VideogenClient({ baseUrl: server.url, apiKey: server.apiKey, maxRetries: 0 });
    const results = await Promise.allSettled([
      client.getTask('task-unified-a'),
      client.getTask('task-unified-b'),
    ]);
    const limited = results.find(
      (result) => result.status === 'rejected' && result.reason instanceof RateLimitError,
    );
    assert.ok(limited && limited.status === 'rejected', 'three requests in one window: two are refused');
    const error = limited.reason as RateLimitError;
    assert.equal(error.code, 'rate_limited');
    assert.equal(error.status, 429);
    assert.equal(error.type, 'rate_limit_error');
    assert.match(error.requestId ?? '', /^req_/);
    assert.ok(error.retryAfter !== undefined && error.retryAfter >= 0 && error.retryAfter <= 5);
    assert.equal(error.headers?.get('ratelimit-remaining'), '0');
  });

  it('waits out a 429 and succeeds', async () => {
    // A key of its own: its window starts with its first request here.
    const apiKey = (await server.cli(['keys', 'create', '--name', 'waits-out'])).trim();
    const recorder = recordingFetch();
    const client = new VideogenClient({
      baseUrl: server.url,
      apiKey,
      fetch: recorder.fetch,
      maxRetries: 3,
    });
    const created = await client.createTask(QUICK);
    const started = Date.now();
    const read = await client.getTask(created.id);
    assert.equal(read.id, created.id);
    assert.ok(
      recorder.sent.length >= 3,
      `${recorder.sent.length} requests: the second was refused, then retried`,
    );
    assert.ok(Date.now() - started >= 50, 'the retry waited');
    const creation = recorder.sent[0];
    assert.match(creation?.headers.get('idempotency-key') ?? '', /^[0-9a-f-]{36}$/);
  });
});

describe('retries of injected failures in front of a real server', () => {
  let server: TestServer;

  before(async () => {
    server = await startServer();
  });
  after(async () => {
    await server?.stop();
  });

  it('retries a 503 with Retry-After and a 500 with backoff, then succeeds', async () => {
    const recorder = recordingFetch((_request, attempt) => {
      if (attempt === 1) return apiErrorResponse(503, 'overloaded', 'api_error', { 'retry-after': '0' });
      if (attempt === 2) return apiErrorResponse(500, 'internal_error', 'api_error');
      return undefined;
    });
    const client = new VideogenClient({
      baseUrl: server.url,
      apiKey: server.apiKey,
      fetch: recorder.fetch,
      backoff: FAST_BACKOFF,
    });
    const task = await client.createTask(QUICK);
    assert.equal(task.status, 'pending');
    assert.equal(recorder.sent.length, 3);
    const keys = new Set(recorder.sent.map((request) => request.headers.get('idempotency-key')));
    assert.equal(keys.size, 1, 'every attempt of one creation carries the same Idempotency-Key');
  });

  it('gives up after maxRetries with the last error', async () => {
    const recorder = recordingFetch(() =>
      apiErrorResponse(503, 'overloaded', 'api_error', { 'retry-after': '0' }),
    );
    const client = new VideogenClient({
      baseUrl: server.url,
      apiKey: server.apiKey,
      fetch: recorder.fetch,
      maxRetries: 2,
    });
    await assert.rejects(client.getTask('task-unified-x'), (error: unknown) => {
      assert.ok(error instanceof ServerError);
      assert.equal(error.code, 'overloaded');
      assert.equal(error.status, 503);
      assert.equal(error.requestId, 'req_injected');
      return true;
    });
    assert.equal(recorder.sent.length, 3);
    recorder.sent.length = 0;
    await assert.rejects(client.getTask('task-unified-x', { maxRetries: 0 }), ServerError);
    assert.equal(recorder.sent.length, 1, 'maxRetries per call');
  });

  it('repeats reads after a broken connection, but not a cancel', async () => {
    const recorder = recordingFetch((_request, attempt) => {
      if (attempt === 1) throw new TypeError('fetch failed');
      return undefined;
    });
    const client = new VideogenClient({
      baseUrl: server.url,
      apiKey: server.apiKey,
      fetch: recorder.fetch,
      backoff: FAST_BACKOFF,
    });
    const pages = client.listTasks({ limit: 1 }).pages()[Symbol.asyncIterator]();
    const first = await pages.next();
    assert.equal(first.done, false);
    assert.equal(recorder.sent.length, 2);

    const running = await client.createTask({ ...QUICK, duration: 15, quality: '1080p' });
    const broken = recordingFetch(() => {
      throw new TypeError('fetch failed');
    });
    const brokenClient = new VideogenClient({
      baseUrl: server.url,
      apiKey: server.apiKey,
      fetch: broken.fetch,
    });
    await assert.rejects(brokenClient.cancelTask(running.id), (error: unknown) => {
      assert.ok(error instanceof ConnectionError);
      assert.equal(error.code, 'connection_error');
      assert.equal(error.status, undefined);
      assert.ok(error.cause instanceof TypeError);
      return true;
    });
    assert.equal(broken.sent.length, 1, 'a cancel is not repeated: it may have happened');
    await client.cancelTask(running.id);
  });

  it('cannot create twice when the answer to a creation is lost and it is retried', async () => {
    const prompt = `lost answer ${crypto.randomUUID()}`;
    let lostOne = false;
    const recorder = recordingFetch(async (request) => {
      if (request.method !== 'POST' || lostOne) return undefined;
      lostOne = true;
      // The server gets the creation and answers; the answer never reaches the client.
      const answered = await fetch(request.url, {
        method: 'POST',
        headers: request.headers,
        body: JSON.stringify({ ...QUICK, prompt }),
      });
      assert.equal(answered.status, 200);
      throw new TypeError('fetch failed: other side closed');
    });
    const client = new VideogenClient({
      baseUrl: server.url,
      apiKey: server.apiKey,
      fetch: recorder.fetch,
      backoff: FAST_BACKOFF,
    });
    const before = await allTasks(client);
    const task = await client.createTask({ ...QUICK, prompt });
    assert.equal(recorder.paths().filter((path) => path === 'POST /v1/videos/generations').length, 2);
    const afterwards = await allTasks(client);
    assert.equal(afterwards.length, before.length + 1, 'one task was created, not two');
    assert.equal(afterwards[0]?.id, task.id);
  });

  it('times out an attempt that gets no answer, and retries it', async () => {
    const recorder = recordingFetch(
      () =>
        new Promise<Response>(() => {
          // Never answers.
        }),
    );
    const client = new VideogenClient({
      baseUrl: server.url,
      apiKey: server.apiKey,
      // Gives up when the client aborts the attempt, as fetch does.
      fetch: async (input, init) => {
        const pending = recorder.fetch(input, init);
        return new Promise<Response>((resolve, reject) => {
          init.signal?.addEventListener('abort', () => reject(init.signal?.reason));
          pending.then(resolve, reject);
        });
      },
      timeout: 100,
      maxRetries: 1,
      backoff: FAST_BACKOFF,
    });
    const started = Date.now();
    await assert.rejects(client.getTask('task-unified-x'), (error: unknown) => {
      assert.ok(error instanceof RequestTimeoutError);
      assert.ok(error instanceof ConnectionError);
      assert.equal(error.code, 'request_timeout');
      return true;
    });
    assert.equal(recorder.sent.length, 2, 'a read that timed out is retried');
    // With the default limit (60 s an attempt), the two attempts would take two minutes.
    assert.ok(Date.now() - started < 30_000, `gave up after ${Date.now() - started} ms`);
  });

  it('stops waiting for a retry when aborted', async () => {
    const recorder = recordingFetch(() =>
      apiErrorResponse(429, 'rate_limited', 'rate_limit_error', { 'retry-after': '120' }),
    );
    const client = new VideogenClient({
      baseUrl: server.url,
      apiKey: server.apiKey,
      fetch: recorder.fetch,
      maxRetryWait: 600_000,
    });
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 200);
    await assert.rejects(
      client.getTask('task-unified-x', { signal: controller.signal }),
      (error: unknown) => (error as Error).name === 'AbortError',
    );
    assert.ok(Date.now() - started < 60_000, 'the 120 s Retry-After was not waited out');
    assert.equal(recorder.sent.length, 1);
  });
});

describe('what is retried, and how long it waits (injected answers, no server)', () => {
  // Nothing listens there: every answer below comes from the interceptor.
  const baseUrl = 'http://127.0.0.1:1';
  const apiKey = 'vg_dev_x';

  it('repeats a 5xx only for idempotent calls, and a 429 for every call', async () => {
    const failing = recordingFetch(() => apiErrorResponse(500, 'internal_error', 'api_error'));
    const client = new VideogenClient({ baseUrl, apiKey, fetch: failing.fetch, backoff: FAST_BACKOFF });
    await assert.rejects(client.cancelTask('task-unified-x'), ServerError);
    assert.equal(failing.sent.length, 1, 'a cancel that failed with 500 may have happened: not repeated');
    failing.sent.length = 0;
    await assert.rejects(client.redeliver('task-unified-x'), ServerError);
    assert.equal(failing.sent.length, 1, 'a redelivery is not repeated either');
    failing.sent.length = 0;
    await assert.rejects(client.uploadFile(new Blob(['x'])), ServerError);
    assert.equal(failing.sent.length, 1, 'nor an upload');
    failing.sent.length = 0;
    await assert.rejects(client.getTask('task-unified-x'), ServerError);
    assert.equal(failing.sent.length, 3, 'a read is');

    const limited = recordingFetch((_request, attempt) =>
      attempt === 1
        ? apiErrorResponse(429, 'rate_limited', 'rate_limit_error', { 'retry-after': '0' })
        : apiErrorResponse(409, 'task_not_cancellable', 'conflict_error'),
    );
    const limitedClient = new VideogenClient({ baseUrl, apiKey, fetch: limited.fetch });
    await assert.rejects(limitedClient.cancelTask('task-unified-x'), ConflictError);
    assert.equal(limited.sent.length, 2, 'a 429 was refused before any work: repeated');
  });

  it('throws at once, rather than wait, when Retry-After asks for longer than maxRetryWait', async () => {
    const recorder = recordingFetch(() =>
      apiErrorResponse(429, 'rate_limited', 'rate_limit_error', { 'retry-after': '3600' }),
    );
    const client = new VideogenClient({ baseUrl, apiKey, fetch: recorder.fetch });
    await assert.rejects(
      client.getTask('task-unified-x'),
      (error: unknown) => error instanceof RateLimitError && error.retryAfter === 3600,
    );
    assert.equal(recorder.sent.length, 1, 'an hour is not waited out by default');

    const patient = recordingFetch((_request, attempt) =>
      attempt === 1
        ? apiErrorResponse(429, 'rate_limited', 'rate_limit_error', { 'retry-after': '1' })
        : jsonResponse(200, { id: 'task-unified-x' }),
    );
    const strict = new VideogenClient({ baseUrl, apiKey, fetch: patient.fetch, maxRetryWait: 500 });
    await assert.rejects(strict.getTask('task-unified-x'), RateLimitError);
    assert.equal(patient.sent.length, 1, 'a second is more than the 500 ms this client waits');
  });

  it('honours a Retry-After given as an HTTP date, on a 429 whatever its body', async () => {
    // A proxy's 429: not the API's JSON, and the date form of Retry-After (whole seconds, so 2 s ahead).
    const retryAt = new Date(Math.ceil(Date.now() / 1000) * 1000 + 2_000);
    const recorder = recordingFetch((_request, attempt) =>
      attempt === 1
        ? new Response('<html>\n<body>Too Many Requests</body>\n</html>', {
            status: 429,
            headers: { 'content-type': 'text/html', 'retry-after': retryAt.toUTCString() },
          })
        : jsonResponse(200, { id: 'task-unified-x' }),
    );
    const client = new VideogenClient({ baseUrl, apiKey, fetch: recorder.fetch, backoff: FAST_BACKOFF });
    await client.getTask('task-unified-x');
    const [first, second] = recorder.sent;
    assert.ok(first && second);
    assert.ok(
      Date.now() >= retryAt.getTime(),
      `retried ${retryAt.getTime() - Date.now()} ms before the Retry-After date`,
    );

    const once = recordingFetch(
      () =>
        new Response('<html>\n<body>Too Many Requests</body>\n</html>', {
          status: 429,
          headers: { 'retry-after': '7' },
        }),
    );
    const noRetries = new VideogenClient({ baseUrl, apiKey, fetch: once.fetch, maxRetries: 0 });
    await assert.rejects(noRetries.getTask('task-unified-x'), (error: unknown) => {
      assert.ok(error instanceof RateLimitError);
      assert.equal(error.retryAfter, 7);
      assert.equal(error.code, 'unexpected_response');
      assert.equal(error.message, 'HTTP 429: <html> <body>Too Many Requests</body> </html>', 'one line');
      return true;
    });
  });

  it("names what refused the connection when fetch's cause is an AggregateError without a message", async () => {
    const refused = (address: string) =>
      Object.assign(new Error(`connect ECONNREFUSED ${address}`), { code: 'ECONNREFUSED' });
    const client = new VideogenClient({
      baseUrl,
      apiKey,
      maxRetries: 0,
      fetch: () => {
        const both = Object.assign(new AggregateError([refused('::1:8080'), refused('127.0.0.1:8080')], ''), {
          code: 'ECONNREFUSED',
        });
        throw new TypeError('fetch failed', { cause: both });
      },
    });
    await assert.rejects(client.getTask('task-unified-x'), (error: unknown) => {
      assert.ok(error instanceof ConnectionError);
      assert.equal(
        error.message,
        'GET /v1/tasks/task-unified-x: fetch failed: connect ECONNREFUSED ::1:8080',
      );
      return true;
    });
  });

  it('sends only the per-call options, whatever else the options object holds', async () => {
    const recorder = recordingFetch(() => jsonResponse(200, { status: 'failed' }));
    const client = new VideogenClient({ baseUrl, apiKey, fetch: recorder.fetch });
    // From JavaScript, or a wider object: fields beyond signal, timeout and maxRetries must not leak in.
    const options = { timeout: 5_000, method: 'DELETE', path: '/v1/elsewhere', idempotent: true };
    await client.cancelTask('task-unified-x', options);
    assert.deepEqual(recorder.paths(), ['POST /v1/tasks/task-unified-x/cancel']);
  });
});

/**
 * Limits over real HTTP (issue 7): the per-key rate limit and its headers, the global queue cap, the per-account
 * cap on running tasks, and per-route body limits.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../src/config.js';
import type { PublicTask } from '../src/domain/task.js';
import { Api, type ErrorBody } from './helpers/api.js';
import { startTestService, type TestService } from './helpers/test-service.js';
import { until } from './helpers/until.js';

const TEXT = { model: 'videogen-2.0-text-to-video', prompt: 'a paper boat on a blue river' };

function assertError(
  response: { status: number; headers: Headers; body: unknown },
  status: number,
  code: string,
  type: string,
): ErrorBody['error'] {
  const body = response.body as ErrorBody;
  assert.equal(response.status, status, JSON.stringify(body));
  assert.equal(body.error.code, code);
  assert.equal(body.error.type, type);
  assert.ok(body.error.message.length > 0);
  assert.equal(body.error.request_id, response.headers.get('x-request-id'));
  return body.error;
}

function rateHeaders(headers: Headers) {
  return {
    limit: headers.get('ratelimit-limit'),
    remaining: headers.get('ratelimit-remaining'),
    reset: headers.get('ratelimit-reset'),
  };
}

describe('per-key rate limit', () => {
  let server: TestService;
  let first: Api;
  let accountId: string;

  before(async () => {
    // 6 a minute counted in 30-second windows: 3 requests per window. A key's window starts with its first
    // request, and a test's few requests take far less than 30 s on any machine.
    server = await startTestService({
      VIDEOGEN_RATE_LIMIT_PER_MINUTE: '6',
      VIDEOGEN_RATE_LIMIT_WINDOW_SECONDS: '30',
    });
    const created = await server.newKey();
    accountId = created.accountId;
    first = new Api(server.url, created.key);
  });
  after(() => server.close());

  it('answers a burst over the limit with 429 rate_limited, a usable Retry-After and RateLimit-* headers', async () => {
    const created = await first.create(TEXT);
    assert.equal(created.status, 200);
    assert.deepEqual(rateHeaders(created.headers).limit, '3');
    assert.equal(created.headers.get('ratelimit-remaining'), '2');
    const reset = Number(created.headers.get('ratelimit-reset'));
    assert.ok(reset >= 1 && reset <= 30, `RateLimit-Reset ${reset}`);
    assert.equal(created.headers.get('retry-after'), null);

    // Errors after authentication count and carry the headers too.
    const missing = await first.get('task-unified-00000000000000000000000000');
    assert.equal(missing.status, 404);
    assert.equal(missing.headers.get('ratelimit-remaining'), '1');
    const last = await first.get(created.body.id);
    assert.equal(last.status, 200);
    assert.equal(last.headers.get('ratelimit-remaining'), '0');

    const limited = await first.get(created.body.id);
    const error = assertError(limited, 429, 'rate_limited', 'rate_limit_error');
    const retryAfter = Number(limited.headers.get('retry-after'));
    assert.ok(
      Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= reset,
      `Retry-After ${retryAfter}`,
    );
    assert.deepEqual(rateHeaders(limited.headers), { limit: '3', remaining: '0', reset: String(retryAfter) });
    assert.match(error.message, new RegExp(`more than 3 requests in 30 s; retry after ${retryAfter} s`));
    // Still limited on the next try, and task creation with it.
    assert.equal((await first.create(TEXT)).status, 429);

    // Another key, even of the same account, has its own count.
    const second = new Api(server.url, (await server.newKey('development', accountId)).key);
    const other = await second.get(created.body.id);
    assert.equal(other.status, 200);
    assert.equal(other.headers.get('ratelimit-remaining'), '2');
  });

  it('never limits or counts requests without a valid key, health checks or metrics', async () => {
    const anonymous = first.withKey(undefined);
    const wrong = first.withKey('vg_dev_0000000000000000000000000000000000');
    for (let i = 0; i < 5; i++) {
      for (const path of ['/healthz', '/readyz', '/metrics']) {
        const response = await anonymous.request('GET', path);
        assert.equal(response.status, 200, path);
        assert.equal(response.headers.get('ratelimit-limit'), null, path);
      }
      const unauthenticated = await anonymous.get('task-unified-00000000000000000000000000');
      assertError(unauthenticated, 401, 'missing_api_key', 'authentication_error');
      assert.equal(unauthenticated.headers.get('ratelimit-limit'), null);
      assertError(await wrong.get('x'), 401, 'invalid_api_key', 'authentication_error');
    }
    const fresh = new Api(server.url, (await server.newKey()).key);
    assert.equal((await fresh.get('x')).headers.get('ratelimit-remaining'), '2');
  });
});

describe('waiting as long as Retry-After says', () => {
  let server: TestService;
  let api: Api;

  before(async () => {
    // One request per 2-second window, so the wait is short.
    server = await startTestService({
      VIDEOGEN_RATE_LIMIT_PER_MINUTE: '30',
      VIDEOGEN_RATE_LIMIT_WINDOW_SECONDS: '2',
    });
    api = new Api(server.url, (await server.newKey()).key);
  });
  after(() => server.close());

  it('lets the next request through', async () => {
    // Two requests in one window: on a machine slow enough to space them 2 s apart, the next pair.
    const limited = await until(async () => {
      const answer = await api.get('task-unified-00000000000000000000000000');
      return answer.status === 429 ? answer : undefined;
    }, 'a request over the limit');
    const retryAfter = Number(limited.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 2, `Retry-After ${retryAfter}`);
    await sleep(retryAfter * 1000);
    const again = await api.get('task-unified-00000000000000000000000000');
    assert.equal(again.status, 404, JSON.stringify(again.body));
    assert.equal(again.headers.get('ratelimit-remaining'), '0', 'the first request of a new window');
  });
});

describe('rate limit off', () => {
  it('VIDEOGEN_RATE_LIMIT_PER_MINUTE=0 sends no RateLimit headers and never answers 429', async () => {
    const server = await startTestService({ VIDEOGEN_RATE_LIMIT_PER_MINUTE: '0' });
    try {
      const api = new Api(server.url, (await server.newKey()).key);
      for (let i = 0; i < 20; i++) {
        const response = await api.get('task-unified-00000000000000000000000000');
        assert.equal(response.status, 404);
        assert.equal(response.headers.get('ratelimit-limit'), null);
      }
    } finally {
      await server.close();
    }
  });
});

describe('global queue cap', () => {
  let server: TestService;
  let api: Api;

  before(async () => {
    server = await startTestService({ VIDEOGEN_MAX_QUEUED_TASKS: '2' });
    api = new Api(server.url, (await server.newKey()).key);
  });
  after(() => server.close());

  it('answers 503 overloaded with Retry-After at the cap, and creates nothing', async () => {
    assert.equal((await api.create(TEXT)).status, 200);
    assert.equal((await api.create(TEXT)).status, 200);
    const assets = join(server.dataDir, 'files', 'assets');
    const storedBefore = await readdir(assets).catch(() => []);

    const png =
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    const refused = await api.create({
      model: 'videogen-2.0-image-to-video',
      prompt: 'inline',
      image_urls: [`data:image/png;base64,${png}`],
    });
    assertError(refused, 503, 'overloaded', 'api_error');
    const retryAfter = Number(refused.headers.get('retry-after'));
    assert.ok(Number.isInteger(retryAfter) && retryAfter > 0, `Retry-After ${retryAfter}`);
    assert.equal(await server.service.store.countPendingTasks(), 2);
    assert.deepEqual(await readdir(assets).catch(() => []), storedBefore);

    // Validation still comes first: a bad request is a 400, not a 503.
    assertError(
      await api.create({ ...TEXT, duration: 99 }),
      400,
      'invalid_parameter',
      'invalid_request_error',
    );
  });
});

describe('request bodies in flight', () => {
  let server: TestService;
  let api: Api;
  let key: string;

  before(async () => {
    // Two bodies at once, 4 MB together.
    server = await startTestService({
      VIDEOGEN_MAX_BODIES_IN_FLIGHT: '2',
      VIDEOGEN_MAX_BODY_MB_IN_FLIGHT: '4',
    });
    key = (await server.newKey()).key;
    api = new Api(server.url, key);
  });
  after(() => server.close());

  /** A creation body of `bytes` bytes: valid JSON, padded with whitespace. */
  const padded = (bytes: number) => {
    const json = JSON.stringify(TEXT);
    return ' '.repeat(bytes - json.length) + json;
  };

  /** A creation whose headers and half its body are sent now; `finish` sends the rest and reads the answer. */
  function heldCreation(body: string): {
    finish(): Promise<{ status: number; body: PublicTask & ErrorBody }>;
  } {
    const { hostname, port } = new URL(server.url);
    const sent = request({
      host: hostname,
      port,
      method: 'POST',
      path: '/v1/videos/generations',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      },
    });
    const answer = new Promise<{ status: number; body: PublicTask & ErrorBody }>((resolve, reject) => {
      sent.once('error', reject);
      sent.once('response', async (response) => {
        let text = '';
        for await (const chunk of response) text += chunk;
        resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) });
      });
    });
    const half = Math.floor(body.length / 2);
    sent.write(body.slice(0, half));
    return {
      finish() {
        sent.end(body.slice(half));
        return answer;
      },
    };
  }

  async function held(): Promise<{ bodies: number; bytes: number }> {
    const text = await (await fetch(`${server.url}/metrics`)).text();
    const value = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1]);
    return {
      bodies: value('videogen_http_request_bodies_in_flight'),
      bytes: value('videogen_http_request_body_bytes_in_flight'),
    };
  }

  const createWith = (body: string) =>
    api.request<PublicTask & ErrorBody>('POST', '/v1/videos/generations', {
      rawBody: body,
      headers: { 'content-type': 'application/json' },
    });

  function assertOverloaded(response: { status: number; headers: Headers; body: unknown }): void {
    assertError(response, 503, 'overloaded', 'api_error');
    const retryAfter = Number(response.headers.get('retry-after'));
    assert.ok(Number.isInteger(retryAfter) && retryAfter > 0, `Retry-After ${retryAfter}`);
  }

  it('refuses large creations beyond the count 503 overloaded with Retry-After, unread; those within complete', async () => {
    const body = padded(1024 * 1024);
    const first = heldCreation(body);
    const second = heldCreation(body);
    await until(async () => (await held()).bodies === 2, 'both bodies admitted');
    const refused = await Promise.all([1, 2, 3].map(() => createWith(body)));
    for (const response of refused) assertOverloaded(response);
    // Small bodies are not counted: ordinary creations go on meanwhile.
    const small = await Promise.all([1, 2, 3].map(() => api.create(TEXT)));
    assert.deepEqual(
      small.map((response) => response.status),
      [200, 200, 200],
    );

    const answers = await Promise.all([first.finish(), second.finish()]);
    assert.deepEqual(
      answers.map((answer) => [answer.status, answer.body.status]),
      [
        [200, 'pending'],
        [200, 'pending'],
      ],
    );
    await until(async () => (await held()).bodies === 0, 'both bodies given back');
    assert.equal((await createWith(body)).status, 200);
  });

  it('refuses a body that would pass the byte bound, while one that fits is admitted', async () => {
    const large = heldCreation(padded(3 * 1024 * 1024));
    await until(async () => (await held()).bytes === 3 * 1024 * 1024, 'the large body admitted');
    assertOverloaded(await createWith(padded(2 * 1024 * 1024)));
    assert.equal((await createWith(padded(512 * 1024))).status, 200);
    assert.equal((await large.finish()).status, 200);
  });
});

describe('per-account cap on running tasks', () => {
  let dir: string;
  let server: TestService;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'videogen-limits-'));
    // A generator that runs until its gate file (the prompt) exists, then fails: the test decides when a task ends.
    const gate = join(dir, 'gate.mjs');
    await writeFile(
      gate,
      "import { existsSync } from 'node:fs';\n" +
        'const file = process.argv[2];\n' +
        'const timer = setInterval(() => existsSync(file) && (clearInterval(timer), process.exit(1)), 20);\n',
    );
    const engines = join(dir, 'engines.json');
    await writeFile(
      engines,
      JSON.stringify({
        engines: { gated: { type: 'exec', command: [process.execPath, gate, '{prompt}'] } },
        models: { 'videogen-2.0-text-to-video': 'gated' },
      }),
    );
    server = await startTestService({
      VIDEOGEN_ENGINES_FILE: engines,
      VIDEOGEN_WORKER_CONCURRENCY: '2',
      VIDEOGEN_MAX_ACTIVE_TASKS_PER_ACCOUNT: '1',
      // Polled often: the rate limit is not what this test is about.
      VIDEOGEN_RATE_LIMIT_PER_MINUTE: '0',
    });
  });
  after(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("keeps an account's second task pending while its first runs, and runs another account's meanwhile", async () => {
    const a = new Api(server.url, (await server.newKey()).key);
    const b = new Api(server.url, (await server.newKey()).key);
    const gate = (name: string) => join(dir, name);
    const status = async (api: Api, id: string) => (await api.get(id)).body.status;
    const reaches = (api: Api, id: string, wanted: PublicTask['status']) =>
      api.pollUntil(id, (task) => task.status === wanted, 30_000, 25);

    const a1 = await a.create({ ...TEXT, prompt: gate('a1') });
    const a2 = await a.create({ ...TEXT, prompt: gate('a2') });
    assert.equal(a1.status, 200);
    assert.equal(a2.status, 200, 'over the cap is queued, never refused');
    assert.equal((await reaches(a, a1.body.id, 'processing')).status, 'processing');

    // Claims take the oldest claimable task first, and the second slot was free from the moment a2 was
    // created: b1, newer, running while a2 waits shows that a2 was passed over for its account's cap. (Without
    // the cap the slot takes a2, and b1, with no slot left, never runs.)
    const b1 = await b.create({ ...TEXT, prompt: gate('b1') });
    assert.equal((await reaches(b, b1.body.id, 'processing')).status, 'processing');
    assert.equal(await status(a, a2.body.id), 'pending');

    await writeFile(gate('a1'), '');
    assert.equal((await reaches(a, a1.body.id, 'failed')).status, 'failed');
    assert.equal((await reaches(a, a2.body.id, 'processing')).status, 'processing');
    assert.equal(await status(b, b1.body.id), 'processing');

    await writeFile(gate('a2'), '');
    await writeFile(gate('b1'), '');
    assert.equal((await reaches(a, a2.body.id, 'failed')).status, 'failed');
    assert.equal((await reaches(b, b1.body.id, 'failed')).status, 'failed');
  });
});

describe('body limits per route', () => {
  let server: TestService;
  let api: Api;

  before(async () => {
    server = await startTestService({ VIDEOGEN_MAX_BODY_MB: '1', VIDEOGEN_MAX_OTHER_BODY_KB: '1' });
    api = new Api(server.url, (await server.newKey()).key);
  });
  after(() => server.close());

  it('answers 413 payload_too_large over a small-limit route, naming its limit', async () => {
    const task = await api.create({ ...TEXT, callback_url: 'https://hooks.example.com/x' });
    assert.equal(task.status, 200);
    const response = await api.request('POST', `/v1/tasks/${task.body.id}/deliveries/redeliver`, {
      body: { padding: 'x'.repeat(4096) },
    });
    const error = assertError(response, 413, 'payload_too_large', 'invalid_request_error');
    assert.match(error.message, /1 KB/);
  });

  it('keeps the large limit for task creation', async () => {
    // Well over the small limit, under the creation one: the body is read and judged on its content.
    const big = await api.create({ ...TEXT, prompt: 'p'.repeat(4000), padding: 'x'.repeat(64 * 1024) });
    assertError(big, 400, 'unknown_parameter', 'invalid_request_error');
    const huge = await api.create({ ...TEXT, padding: 'x'.repeat(1024 * 1024 + 1) });
    const error = assertError(huge, 413, 'payload_too_large', 'invalid_request_error');
    assert.match(error.message, /1 MB/);
  });
});

describe('request timeouts', () => {
  let server: TestService;
  let key: string;

  before(async () => {
    server = await startTestService({ VIDEOGEN_REQUEST_TIMEOUT_SECONDS: '1' });
    key = (await server.newKey()).key;
  });
  after(() => server.close());

  /** Writes `text` and never more; gives back what the server wrote before it closed the connection. */
  async function stall(text: string): Promise<{ answer: string; ms: number }> {
    const { hostname, port } = new URL(server.url);
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined);
    const started = performance.now();
    socket.write(text);
    await once(socket, 'close');
    return { answer: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - started };
  }

  function assertTimedOut({ answer, ms }: { answer: string; ms: number }) {
    assert.ok(ms >= 950, `closed after ${ms} ms, before the timeout`);
    const [head = '', body = ''] = answer.split('\r\n\r\n');
    assert.match(head, /^HTTP\/1\.1 408 /, answer);
    const error = (JSON.parse(body) as ErrorBody).error;
    assert.equal(error.code, 'request_timeout');
    assert.equal(error.type, 'invalid_request_error');
    assert.equal(error.request_id, /\r\nx-request-id: (\S+)/i.exec(head)?.[1]);
  }

  // Without a timeout these connections stay open for as long as the client likes: the test's own limit fails them.
  it('answers 408 request_timeout and closes when a body stops short of its Content-Length', {
    timeout: 30_000,
  }, async () => {
    assertTimedOut(
      await stall(
        `POST /v1/videos/generations HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n` +
          'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"model":',
      ),
    );
  });

  it('does the same for headers that never end, and for an upload that stalls', {
    timeout: 30_000,
  }, async () => {
    assertTimedOut(await stall(`GET /v1/tasks/x HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n`));
    assertTimedOut(
      await stall(
        `POST /v1/files HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n` +
          'Content-Type: multipart/form-data; boundary=B\r\nContent-Length: 10000\r\n\r\n' +
          '--B\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\n\x89PNG',
      ),
    );
  });

  it('are set from VIDEOGEN_* variables, with defaults, and refuse combinations Node would not run', () => {
    assert.deepEqual(loadConfig({}).httpTimeouts, {
      headersMs: 30_000,
      requestMs: 300_000,
      keepAliveMs: 72_000,
      idleMs: 120_000,
    });
    assert.deepEqual(
      loadConfig({
        VIDEOGEN_HEADERS_TIMEOUT_SECONDS: '5',
        VIDEOGEN_REQUEST_TIMEOUT_SECONDS: '0',
        VIDEOGEN_KEEP_ALIVE_TIMEOUT_SECONDS: '10',
        VIDEOGEN_IDLE_TIMEOUT_SECONDS: '0',
      }).httpTimeouts,
      { headersMs: 5000, requestMs: 0, keepAliveMs: 10_000, idleMs: 0 },
    );
    assert.equal(loadConfig({ VIDEOGEN_REQUEST_TIMEOUT_SECONDS: '10' }).httpTimeouts.headersMs, 10_000);
    assert.throws(
      () => loadConfig({ VIDEOGEN_HEADERS_TIMEOUT_SECONDS: '20', VIDEOGEN_REQUEST_TIMEOUT_SECONDS: '10' }),
      /VIDEOGEN_HEADERS_TIMEOUT_SECONDS/,
    );
    assert.throws(
      () => loadConfig({ VIDEOGEN_IDLE_TIMEOUT_SECONDS: '30' }),
      /VIDEOGEN_IDLE_TIMEOUT_SECONDS.*Prefer: wait/,
    );
  });
});

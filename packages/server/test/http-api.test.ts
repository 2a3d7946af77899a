/**
 * The API over real HTTP: the interface's two endpoints and every 4xx row of docs/decisions.md#errors that
 * applies.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { PublicTask } from '../src/domain/task.js';
import { Api, type ErrorBody } from './helpers/api.js';
import { startTestService, type TestService } from './helpers/test-service.js';

const TEXT = { model: 'videogen-2.0-text-to-video', prompt: 'a paper boat on a blue river' };

let server: TestService;
let api: Api;
let accountId: string;

before(async () => {
  server = await startTestService({ VIDEOGEN_MAX_BODY_MB: '1' });
  const created = await server.newKey();
  accountId = created.accountId;
  api = new Api(server.url, created.key);
});
after(() => server.close());

function assertError(
  response: { status: number; headers: Headers; body: unknown },
  status: number,
  code: string,
  param?: string,
) {
  const body = response.body as ErrorBody;
  assert.equal(response.status, status, JSON.stringify(body));
  assert.equal(body.error.code, code);
  assert.equal(typeof body.error.message, 'string');
  assert.ok(body.error.message.length > 0);
  assert.equal(typeof body.error.type, 'string');
  assert.equal(body.error.request_id, response.headers.get('x-request-id'));
  if (param !== undefined) assert.equal(body.error.param, param);
}

/** Sends `text` as is on a new connection and gives back everything the server wrote until it closed. */
async function exchange(
  baseUrl: string,
  text: string,
): Promise<{ status: number; headers: Headers; body: unknown }> {
  const { hostname, port } = new URL(baseUrl);
  const socket = connect(Number(port), hostname);
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.on('error', () => undefined);
  socket.write(text);
  await once(socket, 'close');
  const answer = Buffer.concat(chunks).toString('utf8');
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = new Headers();
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers.append(line.slice(0, colon), line.slice(colon + 1).trim());
  }
  const status = Number(statusLine.split(' ')[1]);
  return { status, headers, body: headers.get('content-type')?.includes('json') ? JSON.parse(body) : body };
}

describe('POST /v1/videos/generations', () => {
  it('creates a pending task with the resolved parameters echoed', async () => {
    const sentAt = Math.floor(Date.now() / 1000);
    const { status, body, headers } = await api.create({ ...TEXT, duration: 6, seed: 99 });
    const answeredAt = Math.ceil(Date.now() / 1000);
    assert.equal(status, 200);
    assert.match(body.id, /^task-unified-[0-9A-Z]{26}$/);
    assert.equal(body.object, 'video.generation.task');
    assert.equal(body.status, 'pending');
    assert.equal(body.progress, 0);
    assert.equal(body.model, TEXT.model);
    assert.equal(body.duration, 6);
    assert.equal(body.quality, '720p');
    assert.equal(body.aspect_ratio, '16:9');
    assert.equal(body.seed, 99);
    assert.equal(body.results, undefined);
    assert.ok(body.created_at >= sentAt && body.created_at <= answeredAt, `created at ${body.created_at}`);
    assert.match(headers.get('x-request-id') ?? '', /^req_/);
  });

  it('moves inline data: assets into storage and keeps only a reference in the task', async () => {
    const png =
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    const { status, body } = await api.create({
      model: 'videogen-2.0-image-to-video',
      prompt: 'inline',
      image_urls: [`data:image/png;base64,${png}`],
    });
    assert.equal(status, 200);
    const stored = await server.service.store.getTask(body.id);
    assert.deepEqual(stored?.params.image_urls, [`storage:assets/${body.id}/image_urls-0`]);
    const file = await readFile(join(server.dataDir, 'files', 'assets', body.id, 'image_urls-0'));
    assert.deepEqual(file, Buffer.from(png, 'base64'));
  });

  it('answers 400 invalid_json for malformed JSON', async () => {
    assertError(
      await api.request('POST', '/v1/videos/generations', {
        rawBody: '{"model":',
        headers: { 'content-type': 'application/json' },
      }),
      400,
      'invalid_json',
    );
    assertError(
      await api.request('POST', '/v1/videos/generations', {
        rawBody: '',
        headers: { 'content-type': 'application/json' },
      }),
      400,
      'invalid_json',
    );
    assertError(
      await api.request('POST', '/v1/videos/generations', {
        rawBody: '[1]',
        headers: { 'content-type': 'application/json' },
      }),
      400,
      'invalid_json',
    );
  });

  it('answers 400 missing_parameter, invalid_parameter, unknown_parameter and model_not_found', async () => {
    assertError(await api.create({ model: TEXT.model }), 400, 'missing_parameter', 'prompt');
    assertError(await api.create({ ...TEXT, duration: 99 }), 400, 'invalid_parameter', 'duration');
    assertError(await api.create({ ...TEXT, resolution: '720p' }), 400, 'unknown_parameter', 'resolution');
    assertError(await api.create({ ...TEXT, model: 'sora-2' }), 400, 'model_not_found', 'model');
    const wrongField = await api.create({ ...TEXT, image_urls: ['https://example.com/a.png'] });
    assertError(wrongField, 400, 'invalid_parameter', 'image_urls');
    assert.match((wrongField.body as ErrorBody).error.message, /videogen-2\.0-image-to-video/);
  });

  it('answers 415 unsupported_media_type for a non-JSON body', async () => {
    assertError(
      await api.request('POST', '/v1/videos/generations', {
        rawBody: 'model=x',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
      415,
      'unsupported_media_type',
    );
    assertError(
      await api.request('POST', '/v1/videos/generations', {
        rawBody: JSON.stringify(TEXT),
        headers: { 'content-type': 'text/plain' },
      }),
      415,
      'unsupported_media_type',
    );
  });

  it('answers 413 payload_too_large over the body limit', async () => {
    const huge = { ...TEXT, image_urls: [`data:image/png;base64,${'A'.repeat(1_200_000)}`] };
    assertError(await api.create(huge), 413, 'payload_too_large');
  });
});

describe('authentication', () => {
  it('answers 401 missing_api_key without a key, on both endpoints', async () => {
    const anonymous = api.withKey(undefined);
    assertError(await anonymous.create(TEXT), 401, 'missing_api_key');
    assertError(await anonymous.get('task-unified-00000000000000000000000000'), 401, 'missing_api_key');
    assertError(
      await anonymous.request('GET', '/v1/tasks/x', { headers: { authorization: 'Basic abc' } }),
      401,
      'missing_api_key',
    );
  });

  it('answers 401 invalid_api_key for an unknown or revoked key', async () => {
    assertError(
      await api.withKey('vg_dev_0000000000000000000000000000000000000000').create(TEXT),
      401,
      'invalid_api_key',
    );
    const { key, id } = await server.newKey('development', accountId);
    const fresh = api.withKey(key);
    assert.equal((await fresh.create(TEXT)).status, 200);
    assert.equal(await server.service.store.revokeApiKey(id), true);
    assertError(await fresh.create(TEXT), 401, 'invalid_api_key');
  });
});

describe('GET /v1/tasks/{task_id}', () => {
  it('returns the task to keys of the same account and environment', async () => {
    const created = await api.create(TEXT);
    const sibling = await server.newKey('development', accountId);
    const { status, body } = await api.withKey(sibling.key).get(created.body.id);
    assert.equal(status, 200);
    assert.equal(body.id, created.body.id);
    assert.equal(body.status, 'pending');
    assert.equal(typeof body.progress, 'number');
  });

  it('answers 404 task_not_found for another account, another environment, or no such task', async () => {
    const created = await api.create(TEXT);
    const stranger = await server.newKey('development');
    assertError(await api.withKey(stranger.key).get(created.body.id), 404, 'task_not_found');
    const production = await server.newKey('production', accountId);
    assertError(await api.withKey(production.key).get(created.body.id), 404, 'task_not_found');
    assertError(await api.get('task-unified-AAAAAAAAAAAAAAAAAAAAAAAAAA'), 404, 'task_not_found');
  });
});

describe('every answer', () => {
  it('carries a request id header, also on 404 routes and health checks', async () => {
    const missing = await api.request('GET', '/v2/nothing');
    assertError(missing, 404, 'not_found');
    const health = await api.request('GET', '/healthz');
    assert.equal(health.status, 200);
    assert.match(health.headers.get('x-request-id') ?? '', /^req_/);
    const ready = await api.request<{ status: string }>('GET', '/readyz');
    assert.equal(ready.status, 200);
    assert.equal(ready.body.status, 'ready');
  });

  it('refuses result links with a bad or missing signature', async () => {
    const created = await api.create(TEXT);
    assertError(
      await api.request('GET', `/v1/results/${created.body.id}.mp4?expires=9999999999&signature=abc`),
      403,
      'invalid_signature',
    );
    assertError(await api.request('GET', `/v1/results/${created.body.id}.mp4`), 403, 'invalid_signature');
  });
});

describe('bodyless calls', () => {
  it("take an empty body with the creation example’s Content-Type, or curl -d ''’s, as no body", async () => {
    const json = { rawBody: '', headers: { 'content-type': 'application/json' } };
    const first = await api.create(TEXT);
    const cancelled = await api.request<PublicTask>('POST', `/v1/tasks/${first.body.id}/cancel`, json);
    assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
    assert.equal(cancelled.body.error?.code, 'cancelled');
    const deleted = await api.request('DELETE', `/v1/tasks/${first.body.id}`, json);
    assert.deepEqual(deleted.body, { id: first.body.id, object: 'video.generation.task', deleted: true });

    const second = await api.create(TEXT);
    const form = { rawBody: '', headers: { 'content-type': 'application/x-www-form-urlencoded' } };
    assert.equal((await api.request('POST', `/v1/tasks/${second.body.id}/cancel`, form)).status, 200);
    assertError(
      await api.request('DELETE', '/v1/tasks/task-unified-AAAAAAAAAAAAAAAAAAAAAAAAAA', json),
      404,
      'task_not_found',
    );
  });

  it('are not calls that need a body: one sent with none is the same 400 with or without a JSON Content-Type', async () => {
    const answers = [
      await api.request<ErrorBody>('POST', '/v1/videos/generations'),
      await api.request<ErrorBody>('POST', '/v1/videos/generations', {
        rawBody: '',
        headers: { 'content-type': 'application/json' },
      }),
      await api.request<ErrorBody>('POST', '/dashboard/api/sign-in'),
    ];
    for (const answer of answers) {
      assertError(answer, 400, 'invalid_json');
      assert.equal(
        answer.body.error.message,
        'The request body is empty: send a JSON object with Content-Type: application/json.',
      );
    }
  });

  it('still refuse a body that is not JSON', async () => {
    const { body: task } = await api.create(TEXT);
    assertError(
      await api.request('POST', `/v1/tasks/${task.id}/cancel`, {
        rawBody: 'now=please',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
      415,
      'unsupported_media_type',
    );
    assertError(
      await api.request('POST', `/v1/tasks/${task.id}/cancel`, {
        rawBody: '{"now":',
        headers: { 'content-type': 'application/json' },
      }),
      400,
      'invalid_json',
    );
    assert.equal((await api.get(task.id)).body.status, 'pending', 'nothing was cancelled');
  });
});

describe('answers outside the routes', () => {
  it('a path that is not valid percent-encoding: 400 malformed_request', async () => {
    assertError(await api.request('GET', '/v1/tasks/%zz'), 400, 'malformed_request');
  });

  it('an over-long task id: 404 task_not_found, as for any id that does not exist', async () => {
    assertError(await api.get('t'.repeat(5000)), 404, 'task_not_found', 'task_id');
    assertError(await api.request('POST', `/v1/tasks/${'t'.repeat(5000)}/cancel`), 404, 'task_not_found');
  });

  it('a request Node’s parser refuses: 400 malformed_request or 431 headers_too_large', async () => {
    const malformed = await exchange(server.url, 'GET /v1/tasks/x HTTP/1.1\r\nHost x\r\n\r\n');
    assertError(malformed, 400, 'malformed_request');
    assert.match(malformed.headers.get('x-request-id') ?? '', /^req_/);
    const huge = await exchange(
      server.url,
      `GET /v1/tasks/x HTTP/1.1\r\nHost: x\r\nX-Padding: ${'p'.repeat(20_000)}\r\n\r\n`,
    );
    assertError(huge, 431, 'headers_too_large');
  });

  it('an HTTP/1.1 request without a Host header: 400 malformed_request with a request id', async () => {
    const answer = await exchange(server.url, 'GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n');
    assertError(answer, 400, 'malformed_request');
    assert.match(answer.headers.get('x-request-id') ?? '', /^req_/);
    // HTTP/1.0 has no Host header to require.
    assert.equal((await exchange(server.url, 'GET /healthz HTTP/1.0\r\n\r\n')).status, 200);
  });

  it('a path no route has: 404 not_found whatever the type of its body, before the body is judged', async () => {
    const bodies: [string, string][] = [
      [
        'multipart/form-data; boundary=x',
        '--x\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\npng\r\n--x--\r\n',
      ],
      ['text/plain', 'a paper boat'],
      ['application/x-www-form-urlencoded', 'model=videogen-2.0-text-to-video'],
      ['application/octet-stream', 'binary'],
      ['application/json', '{"not json'],
      ['application/json', JSON.stringify({ padding: 'x'.repeat(2 * 1024 * 1024) })],
    ];
    for (const [type, body] of bodies) {
      for (const [method, path] of [
        ['POST', '/v1/uploads'],
        ['PUT', '/v1/videos/generations'],
      ] as const) {
        const answer = await api.request(method, path, { rawBody: body, headers: { 'content-type': type } });
        assertError(answer, 404, 'not_found');
        assert.equal((answer.body as ErrorBody).error.message, `No route for ${method} ${path}.`, type);
      }
    }
  });

  it('a valid request and a malformed one sent in one go: both answered, in order', async () => {
    const { hostname, port } = new URL(server.url);
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined);
    const body = JSON.stringify(TEXT);
    socket.write(
      `POST /v1/videos/generations HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${api.key}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}` +
        'GET /v1/tasks HTTP/1.1\r\nHost x\r\n\r\n',
    );
    await once(socket, 'close');
    const answers = Buffer.concat(chunks)
      .toString('utf8')
      .split(/(?=HTTP\/1\.1 )/);
    assert.deepEqual(
      answers.map((answer) => answer.split('\r\n')[0]),
      ['HTTP/1.1 200 OK', 'HTTP/1.1 400 Bad Request'],
    );
    const [created = '', refused = ''] = answers;
    const task = JSON.parse(created.split('\r\n\r\n')[1] ?? '') as PublicTask;
    assert.equal((await api.get(task.id)).status, 200);
    const error = (JSON.parse(refused.split('\r\n\r\n')[1] ?? '') as ErrorBody).error;
    assert.equal(error.code, 'malformed_request');
    assert.notEqual(error.request_id, /x-request-id: (\S+)/.exec(created)?.[1], 'each answer its own id');
  });

  it('answers once a request whose unread body then breaks the parser', async () => {
    // Refused for its type before its body is read; the body (of a transfer coding Node cannot read) then
    // fails to parse. That failure is the same request's: a second answer would be an answer to nothing.
    const { hostname, port } = new URL(server.url);
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.write(
      'POST /v1/videos/generations HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nTransfer-Encoding: gzip\r\n\r\nabcdef',
    );
    await once(socket, 'close');
    const answers = Buffer.concat(chunks)
      .toString('utf8')
      .split(/(?=HTTP\/1\.1 )/);
    assert.equal(answers.length, 1, answers.join('\n---\n'));
    assert.match(answers[0] ?? '', /^HTTP\/1\.1 415 /);
  });
});

describe('a server shutting down', () => {
  it('answers a request that arrives on an open connection 503 overloaded, in the error shape', async () => {
    const closing = await startTestService();
    const key = (await closing.newKey()).key;
    const { hostname, port } = new URL(closing.url);
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined);
    const headers = `Host: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n`;
    // The first request's body is held back, so that the connection is busy when the close begins.
    const received = once(closing.service.app.server, 'request');
    socket.write(`POST /v1/tasks/x/cancel HTTP/1.1\r\n${headers}Content-Length: 2\r\n\r\n`);
    await received;
    const closed = closing.close();
    socket.write(`{}GET /v1/tasks/x HTTP/1.1\r\n${headers}\r\n`);
    await once(socket, 'close');
    await closed;
    const answers = Buffer.concat(chunks)
      .toString('utf8')
      .split(/(?=HTTP\/1\.1 )/);
    assert.equal(answers.length, 2, answers.join('\n---\n'));
    assert.match(answers[0] ?? '', /^HTTP\/1\.1 404 /);
    const [head = '', body = ''] = (answers[1] ?? '').split('\r\n\r\n');
    assert.match(head, /^HTTP\/1\.1 503 /);
    assert.match(head, /\r\nretry-after: 1\r\n/i);
    const error = (JSON.parse(body) as ErrorBody).error;
    assert.equal(error.code, 'overloaded');
    assert.equal(error.request_id, /\r\nx-request-id: (\S+)/i.exec(head)?.[1]);
  });
  it('ends a connection that sent nothing instead of waiting for it', { timeout: 60_000 }, async (t) => {
    // Timeouts of an hour: only the close itself can end the connection within the test's time limit (past
    // which the connection is ended here, so that a failure does not hold the process for the hour).
    const closing = await startTestService({
      VIDEOGEN_KEEP_ALIVE_TIMEOUT_SECONDS: '3600',
      VIDEOGEN_IDLE_TIMEOUT_SECONDS: '0',
      VIDEOGEN_REQUEST_TIMEOUT_SECONDS: '0',
      VIDEOGEN_HEADERS_TIMEOUT_SECONDS: '3600',
    });
    const { hostname, port } = new URL(closing.url);
    const accepted = once(closing.service.app.server, 'connection');
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined);
    t.signal.addEventListener('abort', () => socket.destroy());
    await accepted;
    const ended = once(socket, 'close');
    await closing.close();
    await ended;
    assert.equal(Buffer.concat(chunks).length, 0, 'nothing was asked, so nothing is answered');
  });
});

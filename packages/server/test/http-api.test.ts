/** The API over real HTTP: the interface's two endpoints and every 4xx row of decisions.md §3 that applies. */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
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

describe('POST /v1/videos/generations', () => {
  it('creates a pending task with the resolved parameters echoed', async () => {
    const { status, body, headers } = await api.create({ ...TEXT, duration: 6, seed: 99 });
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
    assert.ok(Math.abs(body.created_at - Date.now() / 1000) < 5);
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

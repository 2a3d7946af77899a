/** `Idempotency-Key` on task creation, through real HTTP. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { PublicTask } from '../src/domain/task.js';
import { Api, type ErrorBody } from './helpers/api.js';
import { startTestService, type TestService } from './helpers/test-service.js';

const REQUEST = {
  model: 'videogen-2.0-fast-text-to-video',
  prompt: 'once only',
  duration: 4,
  quality: '480p',
};

let server: TestService;
let api: Api;

before(async () => {
  // No workers: tasks stay pending, and VIDEOGEN_RATE_LIMIT_PER_MINUTE=0 lets the burst through.
  server = await startTestService({ VIDEOGEN_RATE_LIMIT_PER_MINUTE: '0' });
  api = new Api(server.url, (await server.newKey()).key);
});
after(async () => {
  await server.close();
});

function create(client: Api, key: string, body: unknown = REQUEST) {
  return client.request<PublicTask & ErrorBody>('POST', '/v1/videos/generations', {
    body,
    headers: { 'idempotency-key': key },
  });
}

async function count(client: Api): Promise<number> {
  const { body } = await client.request<{ data: unknown[] }>('GET', '/v1/tasks?limit=100');
  return body.data.length;
}

describe('Idempotency-Key', () => {
  it('returns the original task for a repeat, and refuses another request under the key', async () => {
    const first = await create(api, 'order-1');
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('idempotent-replayed'), null);
    const again = await create(api, 'order-1', { ...REQUEST, duration: 4 });
    assert.equal(again.status, 200);
    assert.equal(again.body.id, first.body.id);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');

    const other = await create(api, 'order-1', { ...REQUEST, prompt: 'something else' });
    assert.equal(other.status, 409);
    assert.equal(other.body.error.code, 'idempotency_conflict');
    assert.equal(other.body.error.param, 'Idempotency-Key');

    const otherAccount = new Api(server.url, (await server.newKey()).key);
    const theirs = await create(otherAccount, 'order-1');
    assert.equal(theirs.status, 200);
    assert.notEqual(theirs.body.id, first.body.id, 'keys belong to an account');
  });

  it('makes one task of 200 concurrent creations with one key', async () => {
    const client = new Api(server.url, (await server.newKey()).key);
    const answers = await Promise.all(Array.from({ length: 200 }, () => create(client, 'burst')));
    assert.deepEqual(new Set(answers.map((a) => a.status)), new Set([200]));
    assert.equal(new Set(answers.map((a) => a.body.id)).size, 1, 'every answer is the same task');
    assert.equal(answers.filter((a) => a.headers.get('idempotent-replayed') === null).length, 1);
    assert.equal(await count(client), 1);
  });

  it('refuses a malformed key, naming the header', async () => {
    for (const key of ['', 'x'.repeat(256), 'tab\there']) {
      const answer = await create(api, key);
      assert.equal(answer.status, 400, JSON.stringify(key));
      assert.equal(answer.body.error.code, 'invalid_parameter');
      assert.equal(answer.body.error.param, 'Idempotency-Key');
    }
  });

  it('lets a key be used again once its task is deleted', async () => {
    const client = new Api(server.url, (await server.newKey()).key);
    const first = await create(client, 'reuse');
    await client.request('POST', `/v1/tasks/${first.body.id}/cancel`);
    assert.equal((await client.request('DELETE', `/v1/tasks/${first.body.id}`)).status, 200);
    const second = await create(client, 'reuse', { ...REQUEST, prompt: 'new' });
    assert.equal(second.status, 200);
    assert.notEqual(second.body.id, first.body.id);
  });
});

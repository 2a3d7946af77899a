/**
 * `POST /v1/provider-callbacks/{engine}` and its use case on their own (Fastify's `inject`, a store of two
 * stored jobs, Ark's verifier): a delivery naming a running job wakes its task and only it, one naming none is
 * taken all the same, the raw bytes reach the verifier whatever the content type, and past the per-address limit
 * deliveries are refused `429` with `Retry-After` until the window ends, on a clock of the test's own.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Fastify from 'fastify';
import { ArkCallbackVerifier } from '../src/engines/ark/ark-callback.js';
import { createErrorHandler } from '../src/http/error-handler.js';
import { providerCallbackRoutes } from '../src/http/routes/provider-callbacks.js';
import { SHARED_SCHEMAS } from '../src/http/schemas.js';
import type { CallbackDelivery } from '../src/ports/provider-callback.js';
import { ProviderCallbacks } from '../src/tasks/provider-callbacks.js';

function setUp(perMinute = 100) {
  const woken: string[] = [];
  const delivered: CallbackDelivery[] = [];
  const jobs = new Map([['seedance cgt-1', 'task-1']]);
  const ark = new ArkCallbackVerifier();
  const callbacks = new ProviderCallbacks({
    store: { findUpstreamJobTask: async (engine, id) => jobs.get(`${engine} ${id}`) },
    verifiers: new Map([
      [
        'seedance',
        {
          verify: (delivery) => {
            delivered.push(delivery);
            return ark.verify(delivery);
          },
        },
      ],
    ]),
    wake: (taskId) => woken.push(taskId),
  });
  const clock = { now: 0 };
  const app = Fastify();
  app.setErrorHandler(createErrorHandler());
  for (const schema of SHARED_SCHEMAS) app.addSchema(schema);
  providerCallbackRoutes(app, { callbacks, perMinute, now: () => clock.now });
  const post = (body: string, contentType = 'application/json') =>
    app.inject({
      method: 'POST',
      url: '/v1/provider-callbacks/seedance',
      headers: { 'content-type': contentType },
      body,
    });
  return { app, woken, delivered, clock, post };
}

describe('POST /v1/provider-callbacks/{engine}', () => {
  it('wakes the task of a running job, and takes a delivery for no job without waking anything', async () => {
    const { app, woken, delivered, post } = setUp();
    const known = await post('{"id": "cgt-1", "status": "succeeded"}', 'text/plain; charset=utf-8');
    assert.equal(known.statusCode, 204);
    assert.equal(delivered[0]?.body.toString('utf8'), '{"id": "cgt-1", "status": "succeeded"}');
    const unknown = await post('{"id": "cgt-2", "status": "succeeded"}');
    assert.equal(unknown.statusCode, 204);
    assert.deepEqual(woken, ['task-1']);
    await app.close();
  });

  it('refuses deliveries past the limit per client address until the window ends', async () => {
    const { app, woken, clock, post } = setUp(2);
    for (let i = 0; i < 2; i++) assert.equal((await post('{"id": "cgt-1"}')).statusCode, 204);
    clock.now = 15_000;
    const refused = await post('{"id": "cgt-1"}');
    assert.equal(refused.statusCode, 429);
    assert.equal(refused.headers['retry-after'], '45');
    assert.equal((refused.json() as { error: { code: string } }).error.code, 'rate_limited');
    assert.equal(woken.length, 2, 'the refused delivery woke nothing');
    clock.now = 60_000;
    assert.equal((await post('{"id": "cgt-1"}')).statusCode, 204);
    await app.close();
  });
});

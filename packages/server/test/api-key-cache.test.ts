/**
 * Authentication reads API keys through a per-process cache (store/active-key-cache.ts): a key revoked by another
 * process is refused within 1 s, one revoked through the process itself at once; and `last_used_at` is still
 * written, at most once a minute per key, without the answer waiting for it. The caches' clock is the store's,
 * injected here and moved by hand, so nothing waits on real time.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Fastify from 'fastify';
import { ApiKeyAuthentication } from '../src/accounts/api-key-authentication.js';
import { hashApiKey } from '../src/domain/identifiers.js';
import { createAuthenticator } from '../src/http/authentication.js';
import { errorHandler } from '../src/http/error-handler.js';
import type { Store } from '../src/ports/store.js';
import { ACTIVE_KEY_TTL_MS } from '../src/store/active-key-cache.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { freshSchemas, postgresSuite, TEST_DATABASE_URL } from './helpers/postgres.js';
import { startTestService, type TestService } from './helpers/test-service.js';
import { until } from './helpers/until.js';

const postgres = await postgresSuite();

/** A clock that moves only when told to. */
function manualClock() {
  const clock = { at: Date.parse('2026-11-24T12:00:00Z'), now: () => clock.at };
  return clock;
}

async function status(server: TestService, key: string): Promise<number> {
  const response = await fetch(`${server.url}/v1/tasks`, { headers: { authorization: `Bearer ${key}` } });
  await response.arrayBuffer();
  return response.status;
}

/** Waits until `check` holds. */
async function eventually(check: () => Promise<boolean>): Promise<void> {
  await until(check, 'the key cache to catch up');
}

describe('revoked keys on SQLite', () => {
  const clock = manualClock();
  let server: TestService;
  before(async () => {
    server = await startTestService({}, { now: clock.now });
  });
  after(() => server.close());

  it('are refused within 1 s when another process revoked them', async () => {
    const { key, id } = await server.newKey();
    assert.equal(await status(server, key), 200);
    // The CLI's `keys revoke`: its own store on the same file.
    const cli = new SqliteStore({ path: join(server.dataDir, 'videogen.db') });
    try {
      assert.equal(await cli.revokeApiKey(id), true);
    } finally {
      await cli.close();
    }
    // The server looked the key up less than 1 s ago, and does not know yet.
    assert.equal(await status(server, key), 200);
    clock.at += ACTIVE_KEY_TTL_MS - 1;
    assert.equal(await status(server, key), 200);
    clock.at += 1;
    assert.equal(await status(server, key), 401);
  });

  it('are refused at once when revoked through the server itself', async () => {
    const { key, id } = await server.newKey();
    assert.equal(await status(server, key), 200);
    assert.equal(await server.service.store.revokeApiKey(id), true);
    assert.equal(await status(server, key), 401);
  });

  it('stop at the end of a rotation grace period, whatever the cache holds', async () => {
    const { key, id, accountId } = await server.newKey();
    assert.equal(await status(server, key), 200);
    const rotated = await server.service.store.rotateApiKey(id, accountId, { prefix: 'p', hash: 'h' }, 300);
    assert.ok(rotated);
    assert.equal(await status(server, key), 200, 'in its grace period');
    clock.at += 300;
    assert.equal(await status(server, key), 401);
  });
});

describe('revoked keys across two API processes on one PostgreSQL schema', postgres, () => {
  const clock = manualClock();
  let first: TestService;
  let second: TestService;
  // Before freshSchemas registers its own: the services are closed before their schema is dropped.
  after(async () => {
    await first?.close();
    await second?.close();
  });
  const schema = freshSchemas()();
  before(async () => {
    const env = { VIDEOGEN_DATABASE_URL: TEST_DATABASE_URL, VIDEOGEN_DATABASE_SCHEMA: schema };
    first = await startTestService(env, { now: clock.now });
    second = await startTestService(env, { now: clock.now });
  });

  it('are refused at once by the process that revoked them, and within 1 s by the other', async () => {
    const { key, id } = await first.newKey();
    assert.equal(await status(first, key), 200);
    assert.equal(await status(second, key), 200);
    assert.equal(await first.service.store.revokeApiKey(id), true);
    assert.equal(await status(first, key), 401);
    clock.at += ACTIVE_KEY_TTL_MS - 1;
    assert.equal(await status(second, key), 200);
    clock.at += 1;
    assert.equal(await status(second, key), 401);
  });
});

describe('last used', () => {
  let store: SqliteStore;
  let touches: number;
  const clock = manualClock();
  let app: ReturnType<typeof Fastify>;
  before(async () => {
    store = new SqliteStore({ path: ':memory:' });
    await store.migrate();
    touches = 0;
    // The store, counting the writes of `last_used_at` the authenticator asks for.
    const counting = new Proxy<Store>(store, {
      get(target, property) {
        if (property === 'touchApiKey') {
          return (id: string, at: number) => {
            touches += 1;
            return target.touchApiKey(id, at);
          };
        }
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    app = Fastify();
    app.setErrorHandler(errorHandler);
    app.get(
      '/',
      { preHandler: createAuthenticator(new ApiKeyAuthentication(counting, clock.now)) },
      async () => ({}),
    );
  });
  after(async () => {
    await app.close();
    await store.close();
  });

  it('is recorded on the first use and then at most once a minute per key', async () => {
    const account = await store.createAccount();
    const key = 'vg_dev_lastused0000000000000000000000';
    await store.createApiKey({
      accountId: account.id,
      name: 'k',
      environment: 'development',
      prefix: 'vg_dev_last',
      hash: hashApiKey(key),
    });
    const get = async () =>
      (await app.inject({ method: 'GET', url: '/', headers: { authorization: `Bearer ${key}` } })).statusCode;

    const first = clock.at;
    assert.equal(await get(), 200);
    assert.equal(touches, 1);
    await eventually(async () => (await listedLastUsed(store, account.id)) === first);

    clock.at += 59_999;
    assert.equal(await get(), 200);
    assert.equal(touches, 1, 'not written again within the minute');

    clock.at += 1;
    assert.equal(await get(), 200);
    assert.equal(touches, 2);
    await eventually(async () => (await listedLastUsed(store, account.id)) === clock.at);
  });
});

async function listedLastUsed(store: Store, accountId: string): Promise<number | null | undefined> {
  return (await store.listApiKeys(accountId))[0]?.lastUsedAt;
}

/**
 * The dispatcher signs with its accounts' secrets read through a cache (webhooks/signing-secrets.ts): a rotation
 * is signed with within 1 s, a retired secret whose overlap has ended is dropped at once, and attempts that miss
 * together share one read. The cache's clock is injected and moved by hand, and the store is a real one.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { WebhookSecret } from '../src/ports/store.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { SIGNING_SECRETS_TTL_MS, SigningSecrets } from '../src/webhooks/signing-secrets.js';

describe('SigningSecrets', () => {
  const clock = { at: Date.parse('2026-11-24T12:00:00Z') };
  let store: SqliteStore;
  let accountId: string;
  let reads: number;
  let secrets: SigningSecrets;

  beforeEach(async () => {
    store = new SqliteStore({ path: ':memory:', now: () => clock.at });
    await store.migrate();
    accountId = (await store.createAccount()).id;
    reads = 0;
    secrets = new SigningSecrets(
      (id) => {
        reads++;
        return store.getWebhookSecrets(id);
      },
      () => clock.at,
    );
  });
  afterEach(() => store.close());

  const current = async () => (await store.getWebhookSecrets(accountId)).map((s) => s.secret);

  it('signs with a rotated secret within SIGNING_SECRETS_TTL_MS (1 s), and the old one until then', async () => {
    assert.equal(SIGNING_SECRETS_TTL_MS, 1000);
    const before = await current();
    assert.deepEqual(await secrets.of(accountId), before);
    clock.at += 1;
    // No overlap: the store signs with the new secret alone from now on.
    const rotated = await store.rotateWebhookSecret(accountId, 0);
    clock.at += SIGNING_SECRETS_TTL_MS - 2;
    assert.deepEqual(await secrets.of(accountId), before, 'still the secret read less than 1 s ago');
    clock.at += 1;
    assert.deepEqual(await secrets.of(accountId), [rotated.secret], 'the rotation 1 s after the read');
    assert.equal(reads, 2);
  });

  it('drops a retired secret when its overlap ends, without waiting for the next read', async () => {
    const [old] = await current();
    const rotated = await store.rotateWebhookSecret(accountId, 500);
    assert.deepEqual(await secrets.of(accountId), [rotated.secret, old]);
    clock.at += 500;
    assert.deepEqual(await secrets.of(accountId), [rotated.secret]);
    assert.equal(reads, 1);
  });

  it('shares one read among attempts that miss together, and reads again after a failed read', async () => {
    const all = await Promise.all([secrets.of(accountId), secrets.of(accountId), secrets.of(accountId)]);
    assert.equal(reads, 1);
    assert.equal(new Set(all.map((s) => s.join())).size, 1);

    let fail = true;
    const flaky = new SigningSecrets(
      (id): Promise<WebhookSecret[]> => {
        reads++;
        return fail ? Promise.reject(new Error('store down')) : store.getWebhookSecrets(id);
      },
      () => clock.at,
    );
    await assert.rejects(flaky.of(accountId), /store down/);
    fail = false;
    assert.deepEqual(await flaky.of(accountId), await current(), 'a failure is not kept');
  });
});

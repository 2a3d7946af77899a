/**
 * The keys a callback verifier fetches from its provider (engines/callbacks/fetched-keys.ts), on a clock of the
 * test's own: one fetch for deliveries waiting together, kept until they age, and neither a refresh nor a failed
 * fetch tried again within `retryAfterMs`, however many deliveries ask.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FetchedKeys } from '../src/engines/callbacks/fetched-keys.js';

function keysOn(answers: (() => Promise<string>)[]) {
  const clock = { now: 0 };
  let fetches = 0;
  const keys = new FetchedKeys<string>({
    fetch: () => {
      const answer = answers[Math.min(fetches, answers.length - 1)] as () => Promise<string>;
      fetches++;
      return answer();
    },
    maxAgeMs: 1000,
    retryAfterMs: 100,
    now: () => clock.now,
  });
  return {
    keys,
    clock,
    get fetches() {
      return fetches;
    },
  };
}

describe('FetchedKeys', () => {
  it('fetches once for deliveries waiting together, and again once the keys are old', async () => {
    const on = keysOn([async () => 'k1', async () => 'k2']);
    assert.deepEqual(await Promise.all([on.keys.get(), on.keys.get(), on.keys.get()]), ['k1', 'k1', 'k1']);
    on.clock.now = 999;
    assert.equal(await on.keys.get(), 'k1');
    on.clock.now = 1000;
    assert.equal(await on.keys.get(), 'k2');
    assert.equal(on.fetches, 2);
  });

  it('refreshes at most once per retryAfterMs', async () => {
    const on = keysOn([async () => 'k1', async () => 'k2']);
    await on.keys.get();
    on.clock.now = 99;
    assert.equal(await on.keys.refreshed(), undefined, 'too soon: nothing new to try');
    on.clock.now = 100;
    assert.equal(await on.keys.refreshed(), 'k2');
    assert.equal(await on.keys.refreshed(), undefined);
    assert.equal(on.fetches, 2);
  });

  it('does not try a failed fetch again within retryAfterMs', async () => {
    const on = keysOn([() => Promise.reject(new Error('down')), async () => 'k1']);
    await assert.rejects(on.keys.get(), /down/);
    on.clock.now = 50;
    await assert.rejects(on.keys.get(), /down/);
    assert.equal(await on.keys.refreshed(), undefined);
    assert.equal(on.fetches, 1);
    on.clock.now = 100;
    assert.equal(await on.keys.get(), 'k1');
    assert.equal(on.fetches, 2);
  });
});

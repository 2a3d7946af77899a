/** Standard Webhooks signatures against the reference library, and the retry schedule's arithmetic. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { newWebhookSecret } from '../src/domain/identifiers.js';
import { parseRetryAfter } from '../src/outbound/retry-after.js';
import { DEFAULT_RETRY_POLICY, MAX_RETRY_AFTER_MS, retryDelay } from '../src/webhooks/retry-policy.js';
import { signatureHeader } from '../src/webhooks/webhook-signature.js';

const HOUR = 3_600_000;

describe('signatureHeader', () => {
  it('matches what the standardwebhooks library signs, for any id, time and body', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }),
        fc.integer({ min: 1, max: 4_000_000_000 }),
        fc.string(),
        (id, ts, body) => {
          const secret = newWebhookSecret();
          assert.equal(
            signatureHeader([secret], id, ts, body),
            new Webhook(secret).sign(id, new Date(ts * 1000), body),
          );
        },
      ),
      { numRuns: 200 },
    );
  });

  it('gives one signature per secret, each verifiable on its own', () => {
    const [current, previous] = [newWebhookSecret(), newWebhookSecret()];
    const body = JSON.stringify({ id: 'task-unified-X', status: 'completed' });
    const timestamp = Math.floor(Date.now() / 1000);
    const header = signatureHeader([current, previous], 'msg_1', timestamp, body);
    assert.equal(header.split(' ').length, 2);
    const headers = {
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(timestamp),
      'webhook-signature': header,
    };
    for (const secret of [current, previous])
      assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
    assert.throws(() => new Webhook(newWebhookSecret()).verify(body, headers));
    assert.throws(() => new Webhook(current).verify(`${body} `, headers), 'the body is covered');
  });

  it('makes distinct whsec_ secrets of 32 random bytes', () => {
    const secrets = new Set(Array.from({ length: 100 }, newWebhookSecret));
    assert.equal(secrets.size, 100);
    for (const secret of secrets) {
      assert.match(secret, /^whsec_/);
      assert.equal(Buffer.from(secret.slice(6), 'base64').length, 32);
    }
  });
});

describe('retry schedule', () => {
  const total = (random: () => number) => {
    let sum = 0;
    for (let attempt = 1; ; attempt++) {
      const delay = retryDelay({ ...DEFAULT_RETRY_POLICY, random }, attempt);
      if (delay === undefined) return { sum, attempts: attempt };
      sum += delay;
    }
  };

  it('spans more than 24 hours over eight attempts even with every delay at its shortest', () => {
    const shortest = total(() => 0);
    assert.equal(shortest.attempts, 8);
    assert.ok(shortest.sum > 24 * HOUR, `${shortest.sum / HOUR} h`);
    const longest = total(() => 0.999999);
    assert.ok(longest.sum < 31 * HOUR, `${longest.sum / HOUR} h`);
  });

  it('starts at about 5 s and spreads each delay by at most 10 %', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        fc.integer({ min: 1, max: 7 }),
        (r, attempt) => {
          const base = DEFAULT_RETRY_POLICY.delaysMs[attempt - 1] ?? 0;
          const delay = retryDelay({ ...DEFAULT_RETRY_POLICY, random: () => r }, attempt) ?? -1;
          assert.ok(delay >= base * 0.9 - 1 && delay <= base * 1.1 + 1);
        },
      ),
    );
    assert.equal(retryDelay({ ...DEFAULT_RETRY_POLICY, random: () => 0.5 }, 1), 5000);
  });

  it('waits for a longer Retry-After, up to 24 hours, and never less than the schedule', () => {
    const policy = { ...DEFAULT_RETRY_POLICY, random: () => 0.5 };
    assert.equal(retryDelay(policy, 1, 60_000), 60_000);
    assert.equal(retryDelay(policy, 1, 1000), 5000);
    assert.equal(retryDelay(policy, 1, 7 * 24 * HOUR), MAX_RETRY_AFTER_MS);
    assert.equal(retryDelay(policy, 8, 60_000), undefined, 'the schedule still ends');
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-11-23T10:00:00Z');
    assert.equal(parseRetryAfter('120', now), 120_000);
    assert.equal(parseRetryAfter(' 0 ', now), 0);
    assert.equal(parseRetryAfter('Mon, 23 Nov 2026 10:02:00 GMT', now), 120_000);
    assert.equal(parseRetryAfter('Mon, 23 Nov 2026 09:00:00 GMT', now), 0, 'a past date is now');
    assert.equal(parseRetryAfter(undefined, now), undefined);
    assert.equal(parseRetryAfter('soon', now), undefined);
    assert.equal(parseRetryAfter('-5', now), undefined);
  });
});

/** EventStreamSlots: the caps on open event streams per key and per process, and each stream's lifetime. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../src/domain/errors.js';
import { ERROR_STATUSES } from '../src/http/error-statuses.js';
import { EventStreamSlots, MAX_RETRY_AFTER_SECONDS } from '../src/http/event-stream-slots.js';

function refusal(take: () => unknown): ApiError {
  try {
    take();
  } catch (error) {
    assert.ok(error instanceof ApiError);
    return error;
  }
  assert.fail('the stream was let in');
}

describe('EventStreamSlots', () => {
  it('refuses a key past its cap with 429 rate_limited and a Retry-After until a stream in the way ends', () => {
    const clock = { now: 1_000_000 };
    const slots = new EventStreamSlots(
      { perKey: 2, perProcess: 0, lifetimeMs: 20_000 },
      { now: () => clock.now, random: () => 0 },
    );
    const first = slots.take('key_a');
    assert.equal(first.lifetimeMs, 20_000);
    clock.now += 5000;
    const second = slots.take('key_a');
    clock.now += 2500;
    const refused = refusal(() => slots.take('key_a'));
    assert.equal(refused.code, 'rate_limited');
    assert.deepEqual(ERROR_STATUSES[refused.code], { status: 429, type: 'rate_limit_error' });
    // The first stream's lifetime runs out 12.5 s from now.
    assert.equal(refused.retryAfterSeconds, 13);
    // Another key is not held up by this one.
    slots.take('key_b').release();
    first.release();
    first.release();
    const third = slots.take('key_a');
    second.release();
    third.release();
  });

  it('refuses any key past the process cap, with Retry-After at most 30 s', () => {
    const clock = { now: 0 };
    const slots = new EventStreamSlots(
      { perKey: 0, perProcess: 3, lifetimeMs: 3_600_000 },
      { now: () => clock.now, random: () => 1 },
    );
    const open = ['key_a', 'key_a', 'key_b'].map((key) => slots.take(key));
    // A tenth less with the random draw at its top: streams opened together end apart.
    assert.equal(open[0]?.lifetimeMs, 3_240_000);
    const refused = refusal(() => slots.take('key_c'));
    assert.equal(refused.code, 'rate_limited');
    assert.equal(refused.retryAfterSeconds, MAX_RETRY_AFTER_SECONDS);
    open[2]?.release();
    slots.take('key_c');
  });

  it('caps nothing at 0', () => {
    const slots = new EventStreamSlots({ perKey: 0, perProcess: 0, lifetimeMs: 1000 });
    for (let i = 0; i < 10_000; i++) slots.take('key_a');
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { FixedWindows } from '../src/domain/fixed-windows.js';

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe('FixedWindows', () => {
  it("starts a window at a subject's first request and counts within it until it ends", () => {
    const time = clock();
    const windows = new FixedWindows({ windowMs: 30_000, maxSubjects: 10, now: time.now });
    assert.deepEqual(windows.hit('a'), { count: 1, remainingMs: 30_000 });
    time.advance(10_000);
    assert.deepEqual(windows.hit('a'), { count: 2, remainingMs: 20_000 });
    time.advance(19_999);
    assert.deepEqual(windows.hit('a'), { count: 3, remainingMs: 1 });
    time.advance(1);
    assert.deepEqual(windows.hit('a'), { count: 1, remainingMs: 30_000 }, 'the window ended: a new one');
  });

  it('keeps subjects apart', () => {
    const time = clock();
    const windows = new FixedWindows({ windowMs: 1000, maxSubjects: 10, now: time.now });
    windows.hit('a');
    windows.hit('a');
    time.advance(500);
    assert.deepEqual(windows.hit('b'), { count: 1, remainingMs: 1000 });
    assert.deepEqual(windows.hit('a'), { count: 3, remainingMs: 500 });
  });

  it('drops ended windows as new ones start, and the oldest past the bound', () => {
    const time = clock();
    const windows = new FixedWindows({ windowMs: 1000, maxSubjects: 3, now: time.now });
    windows.hit('a');
    time.advance(600);
    windows.hit('b');
    time.advance(600);
    // a's window ended: starting c's drops it.
    windows.hit('c');
    assert.equal(windows.size, 2);
    windows.hit('d');
    windows.hit('e');
    // Full with live windows: e's start dropped the oldest (b), which starts afresh.
    assert.equal(windows.size, 3);
    assert.deepEqual(windows.hit('b'), { count: 1, remainingMs: 1000 });
    assert.equal(windows.size, 3);
  });

  it('never admits more than the count of one window per window, for any sequence of requests', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ subject: fc.constantFrom('a', 'b', 'c'), wait: fc.nat(700) }), {
          maxLength: 200,
        }),
        (requests) => {
          const time = clock();
          const windows = new FixedWindows({ windowMs: 1000, maxSubjects: 10, now: time.now });
          const starts = new Map<string, number>();
          for (const { subject, wait } of requests) {
            time.advance(wait);
            const { count, remainingMs } = windows.hit(subject);
            const start = time.now() + remainingMs - 1000;
            assert.ok(remainingMs > 0 && remainingMs <= 1000);
            if (count === 1) starts.set(subject, start);
            // Every count belongs to the window that began with the subject's count 1.
            assert.equal(start, starts.get(subject));
          }
        },
      ),
    );
  });
});

/**
 * tasks/run-time-estimates.ts: the median of the store's recent run times of a model, read at most once per 30 s
 * per model however many polls ask (reads counted on a recording store, time from an injected clock), a kept
 * figure answered while one read renews it, and "no runs" never answered past its time.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ModelId } from '../src/domain/models.js';
import type { RecentRunsQuery } from '../src/ports/store.js';
import {
  median,
  RUN_TIME_TTL_MS,
  RUN_TIME_WINDOW_MS,
  RunTimeEstimates,
} from '../src/tasks/run-time-estimates.js';

const TEXT: ModelId = 'videogen-2.0-text-to-video';
const FAST: ModelId = 'videogen-2.0-fast-text-to-video';

/** A store whose runs the test sets, recording every read; `hold` makes the next read wait for its release. */
function recordingStore() {
  const runs = new Map<ModelId, number[]>();
  const reads: { model: ModelId; query: RecentRunsQuery }[] = [];
  let gate: Promise<void> | undefined;
  return {
    runs,
    reads,
    hold(): () => void {
      let release = () => {};
      gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      return release;
    },
    async recentRunTimes(model: ModelId, query: RecentRunsQuery): Promise<number[]> {
      reads.push({ model, query });
      const held = gate;
      gate = undefined;
      if (held) await held;
      return runs.get(model) ?? [];
    },
  };
}

describe('RunTimeEstimates', () => {
  it('is the median of the last runs, read over the last 24 hours', async () => {
    const store = recordingStore();
    store.runs.set(TEXT, [4_000, 9_000, 5_000]);
    const clock = { now: 1_000_000_000 };
    const estimates = new RunTimeEstimates({ store, now: () => clock.now });
    assert.equal(await estimates.typicalRunMs(TEXT), 5_000);
    assert.deepEqual(store.reads, [
      { model: TEXT, query: { since: clock.now - RUN_TIME_WINDOW_MS, limit: 20 } },
    ]);
    assert.equal(median([1, 2, 3, 10]), 2.5);
    assert.equal(median([]), undefined);
  });

  it('reads a model once per 30 s however many polls ask; each model apart', async () => {
    const store = recordingStore();
    store.runs.set(TEXT, [6_000]);
    const clock = { now: 0 };
    const estimates = new RunTimeEstimates({ store, now: () => clock.now });
    const answers = await Promise.all(Array.from({ length: 50 }, () => estimates.typicalRunMs(TEXT)));
    assert.deepEqual(new Set(answers), new Set([6_000]));
    clock.now = RUN_TIME_TTL_MS - 1;
    assert.equal(await estimates.typicalRunMs(TEXT), 6_000);
    assert.equal(store.reads.length, 1, 'one read for 51 polls within 30 s');
    assert.equal(await estimates.typicalRunMs(FAST), undefined);
    assert.equal(store.reads.length, 2);
  });

  it('answers a kept figure past its time while one read renews it, then the new one', async () => {
    const store = recordingStore();
    store.runs.set(TEXT, [6_000]);
    const clock = { now: 0 };
    const estimates = new RunTimeEstimates({ store, now: () => clock.now });
    assert.equal(await estimates.typicalRunMs(TEXT), 6_000);
    store.runs.set(TEXT, [8_000]);
    clock.now = RUN_TIME_TTL_MS;
    const release = store.hold();
    assert.equal(await estimates.typicalRunMs(TEXT), 6_000, 'the kept one, at once');
    assert.equal(await estimates.typicalRunMs(TEXT), 6_000, 'still, while the read is under way');
    assert.equal(store.reads.length, 2, 'one renewing read');
    release();
    for (;;) {
      const value = await estimates.typicalRunMs(TEXT);
      if (value === 8_000) break;
      assert.equal(value, 6_000);
    }
    assert.equal(store.reads.length, 2);
  });

  it('answers "no runs" past its time only after reading again', async () => {
    const store = recordingStore();
    const clock = { now: 0 };
    const estimates = new RunTimeEstimates({ store, now: () => clock.now });
    assert.equal(await estimates.typicalRunMs(TEXT), undefined);
    store.runs.set(TEXT, [7_000]);
    clock.now = RUN_TIME_TTL_MS - 1;
    assert.equal(await estimates.typicalRunMs(TEXT), undefined, 'kept for its 30 s');
    clock.now = RUN_TIME_TTL_MS;
    assert.equal(await estimates.typicalRunMs(TEXT), 7_000, 'the read after them, waited for');
    assert.equal(store.reads.length, 2);
  });

  it('a failed read is no figure, reported, and read again after 30 s', async () => {
    const errors: unknown[] = [];
    let fail = true;
    const clock = { now: 0 };
    const estimates = new RunTimeEstimates({
      store: {
        recentRunTimes: async () => {
          if (fail) throw new Error('store down');
          return [3_000];
        },
      },
      now: () => clock.now,
      onError: (error) => errors.push(error),
    });
    assert.equal(await estimates.typicalRunMs(TEXT), undefined);
    assert.equal(errors.length, 1);
    fail = false;
    clock.now = RUN_TIME_TTL_MS;
    assert.equal(await estimates.typicalRunMs(TEXT), 3_000);
  });
});

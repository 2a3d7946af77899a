import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OrphanJudge } from '../src/runner/orphan-judge.js';

describe('OrphanJudge', () => {
  it('takes a pool for dead only once its lock has been missing for the grace period', () => {
    let now = 0;
    const judge = new OrphanJudge(5000, 'self', () => now);
    assert.deepEqual(judge.dead(['a']), [], 'first seen missing');
    now = 2000;
    assert.deepEqual(judge.dead(['a']), [], 'missing for 2 s');
    now = 5000;
    assert.deepEqual(judge.dead(['a', 'b']), ['a'], 'missing for 5 s; b only just');
    now = 7000;
    assert.deepEqual(judge.dead(['b']), [], 'a was judged once; b missing for 2 s');
  });

  it('forgets a pool whose lock came back (its connection was reset), and starts again if it goes again', () => {
    let now = 0;
    const judge = new OrphanJudge(5000, 'self', () => now);
    judge.dead(['a']);
    now = 1500;
    assert.deepEqual(judge.dead([]), [], 'the lock is back');
    now = 6000;
    assert.deepEqual(judge.dead(['a']), [], 'missing again: from now, not from the first time');
    now = 11_000;
    assert.deepEqual(judge.dead(['a']), ['a']);
  });

  it('never judges its own pool', () => {
    let now = 0;
    const judge = new OrphanJudge(5000, 'self', () => now);
    judge.dead(['self']);
    now = 60_000;
    assert.deepEqual(judge.dead(['self']), []);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ProgressReporter } from '../src/runner/progress-reporter.js';

describe('ProgressReporter', () => {
  it('writes after the turn that reported the progress, and settle waits for the write', async () => {
    const written: number[] = [];
    const progress = new ProgressReporter(async (value) => {
      written.push(value);
    }, 0);
    progress.update('assets', 1);
    await Promise.resolve();
    assert.deepEqual(written, [], 'the write waits for the next turn of the event loop');
    await progress.settle();
    assert.deepEqual(written, [5]);
  });

  it('writes one at a time, the next when the whole percent has risen again', async () => {
    const written: number[] = [];
    let finish: () => void = () => undefined;
    // The first write is held until `finish`; later ones end at once.
    const progress = new ProgressReporter((value) => {
      written.push(value);
      if (written.length > 1) return Promise.resolve();
      return new Promise<void>((resolve) => {
        finish = resolve;
      });
    }, 0);
    progress.update('render', 0.25);
    // Reported while the first write has not finished: not written.
    progress.update('render', 0.6);
    const settled = progress.settle();
    await new Promise<void>((resolve) => setImmediate(resolve));
    assert.deepEqual(written, [27]);
    finish();
    await settled;
    // 59 % was reported while 27 % was being written: no rise on it now; 68 % is.
    progress.update('render', 0.6);
    await progress.settle();
    assert.deepEqual(written, [27]);
    progress.update('render', 0.7);
    await progress.settle();
    assert.deepEqual(written, [27, 68]);
  });

  it('keeps going after a failed write', async () => {
    const written: number[] = [];
    const progress = new ProgressReporter(async (value) => {
      written.push(value);
      if (value === 5) throw new Error('store unreachable');
    }, 0);
    progress.update('assets', 1);
    await progress.settle();
    progress.update('store', 1);
    await progress.settle();
    assert.deepEqual(written, [5, 99]);
  });
});

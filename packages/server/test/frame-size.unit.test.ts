import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { frameSize, nearestAspectRatio, resolveAspectRatio } from '../src/domain/frame-size.js';

describe('frame size', () => {
  it('follows docs/decisions.md#models-and-requests examples', () => {
    assert.deepEqual(frameSize('720p', '16:9'), { width: 1280, height: 720 });
    assert.deepEqual(frameSize('720p', '9:16'), { width: 720, height: 1280 });
    assert.deepEqual(frameSize('720p', '1:1'), { width: 720, height: 720 });
    assert.deepEqual(frameSize('720p', '21:9'), { width: 1680, height: 720 });
    assert.deepEqual(frameSize('480p', '16:9'), { width: 854, height: 480 });
    assert.deepEqual(frameSize('1080p', '4:3'), { width: 1440, height: 1080 });
    assert.deepEqual(frameSize('1080p', '3:4'), { width: 1080, height: 1440 });
  });

  it('always gives even sides, short side = quality', () => {
    for (const quality of ['480p', '720p', '1080p'] as const) {
      for (const ratio of ['16:9', '9:16', '1:1', '4:3', '3:4', '21:9'] as const) {
        const { width, height } = frameSize(quality, ratio);
        assert.equal(width % 2, 0);
        assert.equal(height % 2, 0);
        assert.equal(Math.min(width, height), Number.parseInt(quality, 10));
      }
    }
  });

  it('snaps adaptive to the nearest listed ratio', () => {
    assert.equal(nearestAspectRatio(1920, 1080), '16:9');
    assert.equal(nearestAspectRatio(1000, 1000), '1:1');
    assert.equal(nearestAspectRatio(600, 800), '3:4');
    assert.equal(nearestAspectRatio(2560, 1080), '21:9');
    assert.equal(nearestAspectRatio(1080, 1920), '9:16');
    assert.equal(resolveAspectRatio('adaptive', undefined), '16:9');
    assert.equal(resolveAspectRatio('4:3', { width: 10, height: 1000 }), '4:3');
  });
});

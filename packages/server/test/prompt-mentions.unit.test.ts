import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { mentionedOrder, type ReferenceSlot } from '../src/engines/local/prompt-mentions.js';

const slot = (kind: ReferenceSlot['kind'], index: number): ReferenceSlot => ({ kind, index });

describe('mentionedOrder', () => {
  it('puts mentioned references first, in the order the prompt mentions them', () => {
    assert.deepEqual(mentionedOrder('video 1 then image 2, ending on image 1', 2, 1), [
      slot('video', 0),
      slot('image', 1),
      slot('image', 0),
    ]);
  });

  it('reads @-mentions, numbers with #, ordinals and synonyms, in any case', () => {
    assert.deepEqual(mentionedOrder('the Second Image fades into @video1, then clip #2', 2, 2), [
      slot('image', 1),
      slot('video', 0),
      slot('video', 1),
      slot('image', 0),
    ]);
    assert.deepEqual(mentionedOrder('Picture 2 and photo 1', 2, 0), [slot('image', 1), slot('image', 0)]);
  });

  it('keeps request order, images first, for a prompt that mentions nothing', () => {
    assert.deepEqual(mentionedOrder('a cat on a sofa', 2, 1), [
      slot('image', 0),
      slot('image', 1),
      slot('video', 0),
    ]);
  });

  it('ignores mentions of references that do not exist, and repeats', () => {
    assert.deepEqual(mentionedOrder('image 7, image 0, video 2, image 2 and image 2 again', 2, 1), [
      slot('image', 1),
      slot('image', 0),
      slot('video', 0),
    ]);
    assert.deepEqual(mentionedOrder('imagery 1 and video10', 1, 1), [slot('image', 0), slot('video', 0)]);
  });

  it('always lists every reference exactly once', () => {
    fc.assert(
      fc.property(fc.string(), fc.nat(9), fc.nat(3), (prompt, images, videos) => {
        const order = mentionedOrder(prompt, images, videos);
        assert.equal(order.length, images + videos);
        assert.equal(new Set(order.map((s) => `${s.kind}${s.index}`)).size, order.length);
      }),
    );
  });
});

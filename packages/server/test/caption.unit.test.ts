import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderCaption, wrapCaption } from '../src/engines/local/caption.js';

/** One unit per character: easy widths to reason about. */
const measure = (line: string): number => line.length;

describe('wrapCaption', () => {
  it('keeps a short prompt on one line', () => {
    assert.deepEqual(wrapCaption('a red kite', 20, measure), ['a red kite']);
  });

  it('wraps at word boundaries onto two lines', () => {
    assert.deepEqual(wrapCaption('a red kite over the green hills', 15, measure), [
      'a red kite over',
      'the green hills',
    ]);
  });

  it('ends a prompt too long for two lines with an ellipsis that fits', () => {
    const lines = wrapCaption('one two three four five six seven eight nine ten', 10, measure);
    assert.equal(lines.length, 2);
    assert.ok(lines[1]?.endsWith('…'));
    for (const line of lines) assert.ok(measure(line) <= 10, `"${line}" fits`);
  });

  it('shortens a single word wider than the frame', () => {
    const [line] = wrapCaption('supercalifragilisticexpialidocious', 12, measure);
    assert.equal(line, 'supercalifr…');
  });
});

describe('renderCaption', () => {
  it('sets the prompt in the packaged font, inside the frame, with the same pixels each time', () => {
    const frame = { width: 854, height: 480 };
    const a = renderCaption('a lighthouse at dusk', frame);
    const b = renderCaption('a lighthouse at dusk', frame);
    assert.ok(a && b);
    assert.ok(
      a.x >= 0 && a.y >= 0 && a.x + a.image.width <= frame.width && a.y + a.image.height <= frame.height,
    );
    assert.ok(a.image.data().equals(b.image.data()));
    assert.equal(renderCaption('   ', frame), null);
  });
});

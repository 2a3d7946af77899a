/** Signed result links: the per-task cache of signed links stays bounded however many tasks are polled. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ResultLinks } from '../src/tasks/result-links.js';

describe('ResultLinks', () => {
  it('keeps at most `keep` signed links, and signs a dropped one again to the same URL', () => {
    const now = () => 1_800_000_000_000;
    const options = { publicUrl: () => 'http://videogen.test', secret: 's', ttlSeconds: 3600, now };
    const links = new ResultLinks({ ...options, keep: 3 });
    const first = links.urlFor('task_0');
    for (let index = 1; index < 50; index++) links.urlFor(`task_${index}`);
    assert.equal(links.kept, 3);
    assert.equal(links.urlFor('task_0'), first);
    assert.ok(
      links.verify(
        'task_0.mp4',
        new URL(first).searchParams.get('expires') ?? '',
        new URL(first).searchParams.get('signature') ?? '',
      ),
    );
    assert.equal(new ResultLinks(options).kept, 0);
  });

  it('keeps 1000 by default', () => {
    const links = new ResultLinks({ publicUrl: () => 'http://videogen.test', secret: 's', ttlSeconds: 60 });
    for (let index = 0; index < 1500; index++) links.urlFor(`task_${index}`);
    assert.equal(links.kept, 1000);
  });
});

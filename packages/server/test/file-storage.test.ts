import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FileStorage } from '../src/storage/file-storage.js';
import { storageConformance } from './storage-conformance.js';

let dir: string;
let roots = 0;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-files-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

storageConformance('files', async () => new FileStorage({ root: join(dir, `root-${++roots}`) }));

describe('FileStorage', () => {
  it('lays keys out as paths under the root and leaves no temporary files', async () => {
    const root = join(dir, 'layout');
    const source = join(dir, 'layout-source.mp4');
    await writeFile(source, 'video bytes');
    const storage = new FileStorage({ root });
    await storage.putFile('results/task-unified-A.mp4', source, 'video/mp4');
    await storage.putFile('results/task-unified-A.mp4', source, 'video/mp4');
    assert.equal(await readFile(join(root, 'results', 'task-unified-A.mp4'), 'utf8'), 'video bytes');
    assert.deepEqual(await readdir(join(root, 'results')), ['task-unified-A.mp4']);
  });

  it('derives the content type from the extension', async () => {
    const root = join(dir, 'types');
    const source = join(dir, 'types-source');
    await writeFile(source, 'x');
    const storage = new FileStorage({ root });
    const expected: Record<string, string> = {
      'a.mp4': 'video/mp4',
      'a.jpg': 'image/jpeg',
      'a.JPEG': 'image/jpeg',
      'a.webp': 'image/webp',
      'a.mp3': 'audio/mpeg',
      'a.m4a': 'audio/mp4',
      'a.wav': 'audio/wav',
      'a.bin': 'application/octet-stream',
      noext: 'application/octet-stream',
    };
    for (const [key, type] of Object.entries(expected)) {
      await storage.putFile(key, source, type);
      assert.equal((await storage.stat(key))?.contentType, type, key);
    }
  });

  it('rejects an invalid byte range', async () => {
    const root = join(dir, 'ranges');
    const source = join(dir, 'ranges-source');
    await writeFile(source, '0123456789');
    const storage = new FileStorage({ root });
    await storage.putFile('r.mp4', source, 'video/mp4');
    await assert.rejects(storage.read('r.mp4', { start: 5, end: 4 }), RangeError);
    await assert.rejects(storage.read('r.mp4', { start: -1, end: 4 }), RangeError);
  });
});

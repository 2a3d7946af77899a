import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Storage } from '../src/ports/storage.js';
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

/** Every file under `root`, as sorted relative paths. */
async function filesUnder(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(root.length + 1))
    .sort();
}

describe('FileStorage', () => {
  it('lays keys out as paths under the root, types beside them, and leaves no temporary files', async () => {
    const root = join(dir, 'layout');
    const source = join(dir, 'layout-source.mp4');
    await writeFile(source, 'video bytes');
    const storage = new FileStorage({ root });
    await storage.putFile('results/task-unified-A.mp4', source, 'video/mp4');
    await storage.putFile('results/task-unified-A.mp4', source, 'video/mp4');
    assert.equal(await readFile(join(root, 'results', 'task-unified-A.mp4'), 'utf8'), 'video bytes');
    assert.deepEqual(await filesUnder(root), [
      '.content-types/results/task-unified-A.mp4',
      'results/task-unified-A.mp4',
    ]);
    await storage.delete('results/task-unified-A.mp4');
    assert.deepEqual(await filesUnder(root), []);
  });

  it('derives the type from the extension for a file that has no recorded type', async () => {
    const root = join(dir, 'types');
    await mkdir(root, { recursive: true });
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
      // Put there by hand, as when a data directory is restored without its `.content-types`.
      await writeFile(join(root, key), 'x');
      assert.equal((await storage.stat(key))?.contentType, type, key);
    }
  });

  it('refuses dot-led segments, which it keeps for itself', async () => {
    const root = join(dir, 'dots');
    const source = join(dir, 'dots-source');
    await writeFile(source, 'x');
    const storage = new FileStorage({ root });
    await storage.putFile('results/x.mp4', source, 'video/mp4');
    for (const key of ['.content-types/results/x.mp4', 'results/.x.mp4', '.hidden', 'a/.b/c.mp4']) {
      await assert.rejects(storage.putFile(key, source, 'video/mp4'), /Invalid storage key/, key);
      await assert.rejects(storage.stat(key), /Invalid storage key/, key);
      await assert.rejects(storage.read(key), /Invalid storage key/, key);
      await assert.rejects(storage.delete(key), /Invalid storage key/, key);
    }
    assert.equal((await storage.stat('results/x.mp4'))?.contentType, 'video/mp4');
  });

  it('writes nothing outside the root for an escaping key', async () => {
    const parent = join(dir, 'escape');
    const root = join(parent, 'root');
    const source = join(dir, 'escape-source');
    await writeFile(source, 'x');
    const storage = new FileStorage({ root });
    for (const key of ['../outside.mp4', 'a/../../outside.mp4', `${parent}/outside.mp4`]) {
      await assert.rejects(storage.putFile(key, source, 'video/mp4'), /Invalid storage key/, key);
    }
    await mkdir(parent, { recursive: true });
    assert.deepEqual(await filesUnder(parent), []);
  });

  it('leaves the stored object untouched when a put fails', async () => {
    const root = join(dir, 'failed-put');
    const source = join(dir, 'failed-put-source');
    await writeFile(source, 'original');
    const storage = new FileStorage({ root });
    await storage.putFile('results/a.mp4', source, 'video/mp4');
    await assert.rejects(storage.putFile('results/a.mp4', join(dir, 'no-such-file'), 'image/png'));
    const object = await storage.stat('results/a.mp4');
    assert.equal(object?.contentType, 'video/mp4');
    assert.equal(object?.size, 8);
    assert.deepEqual(await filesUnder(root), ['.content-types/results/a.mp4', 'results/a.mp4']);

    // The type cannot be recorded (a directory is in the way): the staged copy is cleaned up too.
    await mkdir(join(root, '.content-types', 'results', 'b.mp4', 'in-the-way'), { recursive: true });
    await assert.rejects(storage.putFile('results/b.mp4', source, 'video/mp4'));
    assert.equal(await storage.stat('results/b.mp4'), undefined);
    assert.deepEqual(await filesUnder(root), ['.content-types/results/a.mp4', 'results/a.mp4']);
  });

  it('has no presigned URLs: the server serves its files behind its own signed links', () => {
    const storage: Storage = new FileStorage({ root: join(dir, 'unused') });
    assert.equal(storage.presignedUrl, undefined);
  });
});

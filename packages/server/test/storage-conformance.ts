/**
 * The behaviour every `Storage` must have. Each implementation's test file calls `storageConformance` with
 * a function that opens a fresh, empty storage.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { Storage } from '../src/ports/storage.js';

async function bytesOf(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks);
}

export function storageConformance(name: string, open: () => Promise<Storage>): void {
  describe(`Storage conformance: ${name}`, () => {
    let scratch: string;
    let files = 0;
    before(async () => {
      scratch = await mkdtemp(join(tmpdir(), 'videogen-storage-src-'));
    });
    after(async () => {
      await rm(scratch, { recursive: true, force: true });
    });

    async function localFile(content: Buffer): Promise<string> {
      const path = join(scratch, `source-${++files}`);
      await writeFile(path, content);
      return path;
    }

    const key = (ext = 'mp4') => `results/task-unified-${randomBytes(8).toString('hex')}.${ext}`;

    it('stores a file and reports its size, type and modification time', async () => {
      const storage = await open();
      const content = randomBytes(70_000);
      const k = key();
      const startedAt = Date.now();
      await storage.putFile(k, await localFile(content), 'video/mp4');
      const object = await storage.stat(k);
      assert.ok(object);
      assert.equal(object.size, content.length);
      assert.equal(object.contentType, 'video/mp4');
      assert.ok(Number.isInteger(object.modifiedAt));
      assert.ok(Math.abs(object.modifiedAt - startedAt) < 60_000, `modifiedAt ${object.modifiedAt}`);
    });

    it('reports the content type it was given, whatever the key looks like', async () => {
      const storage = await open();
      const source = await localFile(Buffer.from('bytes'));
      const cases: Array<[string, string]> = [
        [key('png'), 'image/png'],
        [`uploads/${randomBytes(8).toString('hex')}`, 'image/webp'],
        [key('bin'), 'video/mp4'],
        [key('mp4'), 'audio/mp4; codecs="mp4a.40.2"'],
      ];
      for (const [k, type] of cases) await storage.putFile(k, source, type);
      for (const [k, type] of cases) assert.equal((await storage.stat(k))?.contentType, type, k);
    });

    it('stores an empty object', async () => {
      const storage = await open();
      const k = key();
      await storage.putFile(k, await localFile(Buffer.alloc(0)), 'video/mp4');
      assert.equal((await storage.stat(k))?.size, 0);
      assert.equal((await bytesOf(await storage.read(k))).length, 0);
    });

    it('reads the whole object back', async () => {
      const storage = await open();
      const content = randomBytes(200_000);
      const k = key();
      await storage.putFile(k, await localFile(content), 'video/mp4');
      assert.ok((await bytesOf(await storage.read(k))).equals(content));
    });

    it('reads exactly the inclusive byte range asked for', async () => {
      const storage = await open();
      const content = randomBytes(100_000);
      const k = key();
      await storage.putFile(k, await localFile(content), 'video/mp4');
      for (const [start, end] of [
        [0, 0],
        [0, 99],
        [1, 1],
        [12_345, 67_890],
        [99_999, 99_999],
        [50_000, 99_999],
      ] as const) {
        const got = await bytesOf(await storage.read(k, { start, end }));
        assert.equal(got.length, end - start + 1, `${start}-${end}`);
        assert.ok(got.equals(content.subarray(start, end + 1)), `${start}-${end}`);
      }
      // A range reaching past the end stops at the end; one starting past it is refused.
      const tail = await bytesOf(await storage.read(k, { start: 99_990, end: 200_000 }));
      assert.ok(tail.equals(content.subarray(99_990)));
      await assert.rejects(async () => bytesOf(await storage.read(k, { start: 100_000, end: 100_001 })));
    });

    it('round-trips a multi-megabyte file, whole and at its very end', async () => {
      const storage = await open();
      const content = randomBytes(12 * 1024 * 1024 + 17);
      const k = key();
      await storage.putFile(k, await localFile(content), 'video/mp4');
      assert.equal((await storage.stat(k))?.size, content.length);
      const digest = createHash('sha256');
      let chunks = 0;
      for await (const chunk of await storage.read(k)) {
        digest.update(chunk);
        chunks++;
      }
      assert.equal(digest.digest('hex'), createHash('sha256').update(content).digest('hex'));
      assert.ok(chunks > 1, 'streamed in several chunks');
      const last = content.length - 1;
      assert.ok(
        (await bytesOf(await storage.read(k, { start: last, end: last }))).equals(content.subarray(last)),
      );
      const tail = await bytesOf(await storage.read(k, { start: last - 999_999, end: last + 1_000 }));
      assert.ok(tail.equals(content.subarray(last - 999_999)));
    });

    it('refuses a byte range that is not one, or starts past the end, with a RangeError', async () => {
      const storage = await open();
      const k = key();
      await storage.putFile(k, await localFile(Buffer.from('0123456789')), 'video/mp4');
      for (const range of [
        { start: 5, end: 4 },
        { start: -1, end: 4 },
        { start: 0.5, end: 4 },
        { start: 0, end: Number.POSITIVE_INFINITY },
        { start: 10, end: 12 },
        { start: 11, end: 11 },
      ]) {
        await assert.rejects(
          async () => bytesOf(await storage.read(k, range)),
          RangeError,
          JSON.stringify(range),
        );
      }
      const empty = key();
      await storage.putFile(empty, await localFile(Buffer.alloc(0)), 'video/mp4');
      await assert.rejects(async () => bytesOf(await storage.read(empty, { start: 0, end: 0 })), RangeError);
    });

    it('keeps whatever a valid key spells, spaces, reserved URL characters and Unicode included', async () => {
      const storage = await open();
      const id = randomBytes(4).toString('hex');
      const keys = [
        `odd-${id}/a b+c%20d.mp4`,
        `odd-${id}/q?x=1&y=2#frag.mp4`,
        `odd-${id}/ünïcødé 视频.mp4`,
        `odd-${id}/semi;colon,comma@at~tilde!bang'quote(paren)*star$dollar.mp4`,
      ];
      for (const [index, k] of keys.entries()) {
        await storage.putFile(k, await localFile(Buffer.from(`object ${index}`)), 'video/mp4');
      }
      for (const [index, k] of keys.entries()) {
        assert.equal((await storage.stat(k))?.size, `object ${index}`.length, k);
        assert.equal((await bytesOf(await storage.read(k))).toString(), `object ${index}`, k);
      }
      assert.equal(await storage.stat(`odd-${id}/a b c d.mp4`), undefined);
      assert.equal(await storage.stat(`odd-${id}/q`), undefined);
      for (const k of keys) await storage.delete(k);
      for (const k of keys) assert.equal(await storage.stat(k), undefined, k);
    });

    it('leaves the stored object untouched when a put fails', async () => {
      const storage = await open();
      const k = key();
      await storage.putFile(k, await localFile(Buffer.from('original')), 'video/mp4');
      await assert.rejects(storage.putFile(k, join(scratch, 'no-such-file'), 'image/png'));
      await assert.rejects(storage.putFile(k, await localFile(Buffer.from('bad type')), 'video/mp4\r\nX: y'));
      const object = await storage.stat(k);
      assert.equal(object?.size, 8);
      assert.equal(object?.contentType, 'video/mp4');
      assert.equal((await bytesOf(await storage.read(k))).toString(), 'original');
    });

    it('refuses a content type that could not be sent back as a header', async () => {
      const storage = await open();
      const k = key();
      const source = await localFile(Buffer.from('x'));
      for (const type of ['', ' video/mp4', 'video/mp4\r\nSet-Cookie: a=b', 'vidéo/mp4']) {
        await assert.rejects(storage.putFile(k, source, type), /Invalid content type/, JSON.stringify(type));
      }
      assert.equal(await storage.stat(k), undefined);
    });

    it('lets go of a read abandoned part-way', { timeout: 60_000 }, async () => {
      const storage = await open();
      const content = randomBytes(2 * 1024 * 1024);
      const k = key();
      await storage.putFile(k, await localFile(content), 'video/mp4');
      // More than an HTTP agent's default socket pool (50): a leak would stall here.
      for (let i = 0; i < 60; i++) {
        const stream = await storage.read(k);
        for await (const _chunk of stream) break;
      }
      assert.ok((await bytesOf(await storage.read(k, { start: 0, end: 9 }))).equals(content.subarray(0, 10)));
    });

    it('replaces an object, and its type, on a second put', async () => {
      const storage = await open();
      const k = key();
      await storage.putFile(k, await localFile(Buffer.from('first version, longer')), 'video/mp4');
      await storage.putFile(k, await localFile(Buffer.from('second')), 'application/octet-stream');
      const object = await storage.stat(k);
      assert.equal(object?.size, 6);
      assert.equal(object?.contentType, 'application/octet-stream');
      assert.equal((await bytesOf(await storage.read(k))).toString(), 'second');
    });

    it('keeps objects apart: nested keys, prefixes that are no objects', async () => {
      const storage = await open();
      const id = randomBytes(8).toString('hex');
      const deep = `nest-${id}/a/b/c/d.mp4`;
      const sibling = `nest-${id}/a/other.mp4`;
      await storage.putFile(deep, await localFile(Buffer.from('deep')), 'video/mp4');
      await storage.putFile(sibling, await localFile(Buffer.from('sibling')), 'video/mp4');
      assert.equal((await storage.stat(deep))?.size, 4);
      assert.equal((await storage.stat(sibling))?.size, 7);
      for (const prefix of [`nest-${id}`, `nest-${id}/a`, `nest-${id}/a/b/c`]) {
        assert.equal(await storage.stat(prefix), undefined, prefix);
        await assert.rejects(async () => bytesOf(await storage.read(prefix)), Error, prefix);
        await storage.delete(prefix);
      }
      assert.equal((await bytesOf(await storage.read(deep))).toString(), 'deep');
      assert.equal((await bytesOf(await storage.read(sibling))).toString(), 'sibling');
    });

    it('deletes an object; deleting a missing one is fine', async () => {
      const storage = await open();
      const k = key();
      const other = key();
      await storage.putFile(k, await localFile(Buffer.from('x')), 'video/mp4');
      await storage.putFile(other, await localFile(Buffer.from('y')), 'video/mp4');
      await storage.delete(k);
      assert.equal(await storage.stat(k), undefined);
      // The error a missing file gives, whatever the storage, so callers can tell it from a failure.
      await assert.rejects(async () => bytesOf(await storage.read(k)), { code: 'ENOENT' });
      await storage.delete(k);
      await storage.delete(key());
      assert.equal((await storage.stat(other))?.size, 1);
      // The key is free again.
      await storage.putFile(k, await localFile(Buffer.from('again')), 'image/png');
      assert.deepEqual(
        { ...(await storage.stat(k)), modifiedAt: 0 },
        { size: 5, contentType: 'image/png', modifiedAt: 0 },
      );
    });

    it('reports a missing key as undefined', async () => {
      const storage = await open();
      assert.equal(await storage.stat(key()), undefined);
      assert.equal(await storage.stat('nowhere/at/all.mp4'), undefined);
    });

    it('rejects keys that could escape', async () => {
      const storage = await open();
      const source = await localFile(Buffer.from('z'));
      for (const bad of [
        '',
        '../outside.mp4',
        'results/../../outside.mp4',
        'results/./x.mp4',
        '/etc/passwd',
        'results//x.mp4',
        'results/',
        'results\\..\\x.mp4',
        'results/x\0.mp4',
        '..',
      ]) {
        await assert.rejects(storage.putFile(bad, source, 'video/mp4'), Error, JSON.stringify(bad));
        await assert.rejects(storage.stat(bad), Error, JSON.stringify(bad));
        await assert.rejects(async () => bytesOf(await storage.read(bad)), Error, JSON.stringify(bad));
        await assert.rejects(storage.delete(bad), Error, JSON.stringify(bad));
      }
    });
  });
}

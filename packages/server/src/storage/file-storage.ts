/** The `Storage` port on a local directory: one file per key, replaced atomically. */
import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { dirname, extname, join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import type { ByteRange, Storage, StoredObject } from '../ports/storage.js';

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.mp4': 'video/mp4',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.webp': 'image/webp',
  '.mp3': 'audio/mpeg',
  '.m4a': 'audio/mp4',
  '.wav': 'audio/wav',
};

/** Files carry no metadata, so the type comes from the key's extension (keys are ours, not clients'). */
export function contentTypeOf(key: string): string {
  return CONTENT_TYPES[extname(key).toLowerCase()] ?? 'application/octet-stream';
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

export class FileStorage implements Storage {
  readonly #root: string;

  constructor(options: { root: string }) {
    this.#root = resolve(options.root);
  }

  /** The file behind `key`; throws for keys that could reach outside the root. */
  #path(key: string): string {
    const segments = key.split('/');
    const unsafe =
      key.length === 0 ||
      key.includes('\\') ||
      key.includes('\0') ||
      segments.some((segment) => segment === '' || segment === '.' || segment === '..');
    if (unsafe) throw new Error(`Invalid storage key ${JSON.stringify(key)}.`);
    return join(this.#root, ...segments);
  }

  async putFile(key: string, localPath: string, _contentType: string): Promise<void> {
    const target = this.#path(key);
    await mkdir(dirname(target), { recursive: true });
    // Same directory as the target, so the rename is atomic: readers see the old file or the new one.
    const temporary = `${target}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      await copyFile(localPath, temporary);
      await rename(temporary, target);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  }

  async stat(key: string): Promise<StoredObject | undefined> {
    try {
      const info = await stat(this.#path(key));
      if (!info.isFile()) return undefined;
      return { size: info.size, contentType: contentTypeOf(key), modifiedAt: Math.floor(info.mtimeMs) };
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  async read(key: string, range?: ByteRange): Promise<Readable> {
    if (range && !(Number.isSafeInteger(range.start) && Number.isSafeInteger(range.end))) {
      throw new RangeError('A byte range needs whole numbers.');
    }
    if (range && (range.start < 0 || range.end < range.start)) {
      throw new RangeError(`Invalid byte range ${range.start}-${range.end}.`);
    }
    // Opened first so a missing key rejects here rather than as a stream error mid-response.
    const handle = await open(this.#path(key), 'r');
    return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
  }

  async delete(key: string): Promise<void> {
    await rm(this.#path(key), { force: true });
  }
}

/**
 * The `Storage` port on a local directory. The object under `results/x.mp4` is the file
 * `<root>/results/x.mp4`; its content type is the one line of `<root>/.content-types/results/x.mp4`.
 * Keys never have a segment starting with a dot, so neither that tree nor the temporary files (hidden,
 * in the target's directory) can collide with an object.
 */
import { randomBytes } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import {
  copyFile,
  type FileHandle,
  mkdir,
  open,
  readFile,
  rename,
  stat,
  unlink,
  writeFile,
} from 'node:fs/promises';
import { basename, dirname, extname, join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import type { ByteRange, Storage, StoredObject } from '../ports/storage.js';
import { assertByteRange, assertContentType, assertStorageKey } from './storage-key.js';

const CONTENT_TYPE_DIR = '.content-types';

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.mp4': 'video/mp4',
  '.mov': 'video/quicktime',
  '.webm': 'video/webm',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.webp': 'image/webp',
  '.gif': 'image/gif',
  '.mp3': 'audio/mpeg',
  '.m4a': 'audio/mp4',
  '.wav': 'audio/wav',
};

/** The type an extension implies: what `stat` reports for a file that has no recorded type. */
export function contentTypeOf(key: string): string {
  return CONTENT_TYPES[extname(key).toLowerCase()] ?? 'application/octet-stream';
}

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** Errors that mean "there is no object under this key". */
function isMissing(error: unknown): boolean {
  const code = errorCode(error);
  return code === 'ENOENT' || code === 'ENOTDIR';
}

async function syncPath(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Writes a hidden temporary file beside `path` and flushes it to disk, so that once `commit` renames it a
 * crash cannot leave a truncated file behind a valid name.
 */
async function stage(path: string, write: (temporary: string) => Promise<void>): Promise<string> {
  const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    await write(temporary);
    await syncPath(temporary);
    return temporary;
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
}

/** Renames a staged file over `path`: readers see the old file or the new one, never a mix. */
async function commit(temporary: string, path: string): Promise<void> {
  try {
    await rename(temporary, path);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
  await syncPath(dirname(path));
}

export class FileStorage implements Storage {
  readonly #root: string;

  constructor(options: { root: string }) {
    this.#root = resolve(options.root);
  }

  #path(key: string): string {
    assertStorageKey(key);
    return join(this.#root, ...key.split('/'));
  }

  #typePath(key: string): string {
    return join(this.#root, CONTENT_TYPE_DIR, ...key.split('/'));
  }

  async putFile(key: string, localPath: string, contentType: string): Promise<void> {
    const target = this.#path(key);
    assertContentType(contentType);
    const typePath = this.#typePath(key);
    await mkdir(dirname(target), { recursive: true });
    await mkdir(dirname(typePath), { recursive: true });
    const staged = await stage(target, (temporary) =>
      copyFile(localPath, temporary, constants.COPYFILE_FICLONE),
    );
    // The type first, the object last: the object's rename is the moment the new version exists.
    try {
      await commit(await stage(typePath, (temporary) => writeFile(temporary, contentType)), typePath);
    } catch (error) {
      await unlink(staged).catch(() => undefined);
      throw error;
    }
    await commit(staged, target);
  }

  async stat(key: string): Promise<StoredObject | undefined> {
    const path = this.#path(key);
    let info: Stats;
    try {
      info = await stat(path);
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
    if (!info.isFile()) return undefined;
    return {
      size: info.size,
      contentType: await this.#contentType(key),
      modifiedAt: Math.floor(info.mtimeMs),
    };
  }

  async #contentType(key: string): Promise<string> {
    try {
      return await readFile(this.#typePath(key), 'utf8');
    } catch (error) {
      // A file put there by hand (or a put cut short by a crash) has no recorded type.
      if (isMissing(error) || errorCode(error) === 'EISDIR') return contentTypeOf(key);
      throw error;
    }
  }

  async read(key: string, range?: ByteRange): Promise<Readable> {
    const path = this.#path(key);
    if (range) assertByteRange(range);
    // Opened first so a missing key rejects here rather than as a stream error mid-response.
    const handle: FileHandle = await open(path, 'r');
    try {
      const info = await handle.stat();
      if (!info.isFile()) {
        throw Object.assign(new Error(`No object under ${JSON.stringify(key)}.`), { code: 'ENOENT' });
      }
      if (range && range.start >= info.size) {
        throw new RangeError(
          `The range ${range.start}-${range.end} starts past the ${info.size}-byte object.`,
        );
      }
    } catch (error) {
      await handle.close();
      throw error;
    }
    // A range reaching past the end stops at the end, as object stores do.
    return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
  }

  async delete(key: string): Promise<void> {
    const path = this.#path(key);
    for (const file of [path, this.#typePath(key)]) {
      try {
        await unlink(file);
      } catch (error) {
        // A directory under the key (`results` when `results/x.mp4` exists) is no object either.
        if (!isMissing(error) && errorCode(error) !== 'EISDIR') throw error;
      }
    }
  }
}

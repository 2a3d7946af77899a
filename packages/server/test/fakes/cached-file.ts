/**
 * A file the fakes make once and keep at a path: later requests (and later test runs sharing the folder) get
 * the kept file, concurrent requests for one path share one making, and the file is written under another
 * name and renamed into place, so that a concurrent download never reads half of it.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, extname } from 'node:path';

/** Files being made now, by path. */
const making = new Map<string, Promise<string>>();

/** The file at `path`, made with `make` (which writes the path it is given) when it is not there yet. */
export function cachedFile(path: string, make: (partial: string) => Promise<unknown>): Promise<string> {
  let made = making.get(path);
  if (!made) {
    made = makeUnlessKept(path, make).finally(() => making.delete(path));
    making.set(path, made);
  }
  return made;
}

async function makeUnlessKept(path: string, make: (partial: string) => Promise<unknown>): Promise<string> {
  if (await isKept(path)) return path;
  await mkdir(dirname(path), { recursive: true });
  // The same ending as the path's, since tools such as ffmpeg choose the format by it.
  const partial = `${path}.${randomUUID()}${extname(path)}`;
  try {
    await make(partial);
    await rename(partial, path);
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
  return path;
}

async function isKept(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** Copies an object in storage under another key, through a file (the `Storage` port takes files). */
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Storage } from '../ports/storage.js';

export async function copyStoredObject(
  storage: Pick<Storage, 'read' | 'stat' | 'putFile'>,
  from: string,
  to: string,
  tempDir: string = tmpdir(),
): Promise<void> {
  const object = await storage.stat(from);
  if (!object) throw new Error(`no object ${from} to copy`);
  const path = join(tempDir, `copy-${randomBytes(8).toString('hex')}`);
  try {
    await pipeline(await storage.read(from), createWriteStream(path));
    await storage.putFile(to, path, object.contentType);
  } finally {
    await rm(path, { force: true });
  }
}

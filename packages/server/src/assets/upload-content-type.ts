/**
 * The content type an uploaded file is stored and served with: read from its first bytes, never taken from the
 * client, which may declare anything (the SDK sends `application/octet-stream` for a Blob without a type).
 */
import { open } from 'node:fs/promises';
import type { AssetField } from '../domain/models.js';
import type { UploadKind } from '../domain/uploaded-file.js';
import { sniffMediaType } from '../media/media-type.js';

const FIELD_OF_KIND: Readonly<Record<UploadKind, AssetField>> = {
  image: 'image_urls',
  video: 'video_urls',
  audio: 'audio_urls',
};

/** More than any signature the sniffer reads. */
const HEAD_BYTES = 64;

async function readHead(path: string): Promise<Buffer> {
  const file = await open(path, 'r');
  try {
    const head = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await file.read(head, 0, HEAD_BYTES, 0);
    return head.subarray(0, bytesRead);
  } finally {
    await file.close();
  }
}

/**
 * The media type of the file at `path`, of the `kind` its content was found to be (the kind settles containers
 * that hold video or audio, such as MP4 and WebM); `application/octet-stream` when its signature is unknown or
 * names another kind.
 */
export async function uploadContentType(path: string, kind: UploadKind): Promise<string> {
  const sniffed = sniffMediaType(await readHead(path), FIELD_OF_KIND[kind]);
  return sniffed?.startsWith(`${kind}/`) ? sniffed : 'application/octet-stream';
}

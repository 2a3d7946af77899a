/**
 * The media type of a file an engine hands to a model server, read from its first bytes: downloaded assets
 * carry no extension, and a server may care (a multipart upload's type, a `data:` URL, an upload's name).
 */
import { extname } from 'node:path';
import type { AssetField } from '../domain/models.js';

const BY_EXTENSION: Readonly<Record<string, string>> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.webp': 'image/webp',
  '.gif': 'image/gif',
  '.bmp': 'image/bmp',
  '.mp4': 'video/mp4',
  '.m4v': 'video/mp4',
  '.mov': 'video/quicktime',
  '.webm': 'video/webm',
  '.mkv': 'video/x-matroska',
  '.avi': 'video/x-msvideo',
  '.mp3': 'audio/mpeg',
  '.m4a': 'audio/mp4',
  '.aac': 'audio/aac',
  '.wav': 'audio/wav',
  '.ogg': 'audio/ogg',
  '.opus': 'audio/ogg',
  '.flac': 'audio/flac',
};

function startsWith(bytes: Buffer, offset: number, signature: string | readonly number[]): boolean {
  const expected = typeof signature === 'string' ? Buffer.from(signature, 'latin1') : Buffer.from(signature);
  return bytes.subarray(offset, offset + expected.length).equals(expected);
}

/** The media type of `bytes` by their signature; `field` settles containers that hold video or audio. */
export function sniffMediaType(bytes: Buffer, field: AssetField): string | undefined {
  const audio = field === 'audio_urls';
  if (startsWith(bytes, 0, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(bytes, 0, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith(bytes, 0, 'GIF8')) return 'image/gif';
  if (startsWith(bytes, 0, 'RIFF')) {
    if (startsWith(bytes, 8, 'WEBP')) return 'image/webp';
    if (startsWith(bytes, 8, 'WAVE')) return 'audio/wav';
    if (startsWith(bytes, 8, 'AVI ')) return 'video/x-msvideo';
  }
  if (startsWith(bytes, 4, 'ftyp')) {
    if (startsWith(bytes, 8, 'qt  ')) return 'video/quicktime';
    return audio || startsWith(bytes, 8, 'M4A ') ? 'audio/mp4' : 'video/mp4';
  }
  if (startsWith(bytes, 0, [0x1a, 0x45, 0xdf, 0xa3])) return audio ? 'audio/webm' : 'video/webm';
  if (startsWith(bytes, 0, 'OggS')) return 'audio/ogg';
  if (startsWith(bytes, 0, 'fLaC')) return 'audio/flac';
  if (startsWith(bytes, 0, 'ID3')) return 'audio/mpeg';
  if (bytes.length >= 2 && bytes[0] === 0xff && ((bytes[1] ?? 0) & 0xe0) === 0xe0) {
    // An ADTS (AAC) header has layer bits 00; MPEG audio (MP3) has them set.
    return ((bytes[1] ?? 0) & 0x06) === 0 ? 'audio/aac' : 'audio/mpeg';
  }
  if (startsWith(bytes, 0, 'BM')) return 'image/bmp';
  return undefined;
}

/** The media type of a file's `bytes`, else of its extension; `application/octet-stream` when neither says. */
export function mediaType(bytes: Buffer, path: string, field: AssetField): string {
  return (
    sniffMediaType(bytes, field) ?? BY_EXTENSION[extname(path).toLowerCase()] ?? 'application/octet-stream'
  );
}

/** File name extensions of the image types above. */
export const IMAGE_EXTENSIONS: Readonly<Record<string, string>> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/webp': 'webp',
  'image/gif': 'gif',
  'image/bmp': 'bmp',
};

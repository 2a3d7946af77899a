/**
 * Files uploaded with `POST /v1/files`: an image, video or audio file an account keeps for its requests.
 * Its URL (`{public url}/v1/files/{id}/content`) goes in `image_urls`, `video_urls` or `audio_urls`; the
 * task then reads the file from storage, never over HTTP.
 */
import { randomBytes } from 'node:crypto';
import { unixSeconds } from './unix-seconds.js';

export const UPLOAD_KINDS = ['image', 'video', 'audio'] as const;
export type UploadKind = (typeof UPLOAD_KINDS)[number];

export interface FileRecord {
  readonly id: string;
  readonly accountId: string;
  readonly environment: 'development' | 'production';
  readonly kind: UploadKind;
  readonly contentType: string;
  readonly filename: string;
  readonly bytes: number;
  readonly createdAt: number;
}

export interface PublicFile {
  readonly id: string;
  readonly object: 'file';
  readonly kind: UploadKind;
  readonly content_type: string;
  readonly filename: string;
  readonly bytes: number;
  readonly created_at: number;
  /** What to put in `image_urls`, `video_urls` or `audio_urls`. */
  readonly url: string;
}

/** `file-` and 32 hex digits: 128 random bits, unguessable. */
export function newFileId(): string {
  return `file-${randomBytes(16).toString('hex')}`;
}

export function isFileId(value: string): boolean {
  return /^file-[0-9a-f]{32}$/.test(value);
}

export function fileContentPath(fileId: string): string {
  return `/v1/files/${fileId}/content`;
}

export function toPublicFile(file: FileRecord, publicUrl: string): PublicFile {
  return {
    id: file.id,
    object: 'file',
    kind: file.kind,
    content_type: file.contentType,
    filename: file.filename,
    bytes: file.bytes,
    created_at: unixSeconds(file.createdAt),
    url: `${publicUrl}${fileContentPath(file.id)}`,
  };
}

/**
 * The `Storage` port: where result videos (and later uploads) live. Implementations: local files
 * (`storage/file-storage.ts`); S3-compatible object storage follows with the same conformance suite.
 */
import type { Readable } from 'node:stream';

export interface StoredObject {
  readonly size: number;
  readonly contentType: string;
  /** Epoch milliseconds. */
  readonly modifiedAt: number;
}

export interface ByteRange {
  /** Inclusive. */
  readonly start: number;
  /** Inclusive. */
  readonly end: number;
}

export interface Storage {
  /** Copies a local file in under `key`, replacing any object there. */
  putFile(key: string, localPath: string, contentType: string): Promise<void>;
  stat(key: string): Promise<StoredObject | undefined>;
  /** Streams the object, or the inclusive byte range of it. */
  read(key: string, range?: ByteRange): Promise<Readable>;
  delete(key: string): Promise<void>;
}

/**
 * The `Storage` port: where result videos and inline reference assets (and later uploads) live. Implementations: local files
 * (`storage/file-storage.ts`) and S3-compatible object storage (`storage/s3-storage.ts`), held to the same
 * conformance suite.
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
  /**
   * A URL that fetches the object with a plain GET (Range requests included) until it expires, without
   * going through this server. Only stores that sign their own links have it; for the others the server
   * serves the object behind its own signed link.
   */
  presignedUrl?(key: string, options: PresignOptions): Promise<string>;
  /**
   * A capability of object storage: throws unless the bucket exists and the credentials reach it, so that a
   * misconfiguration fails the start rather than the first request. Absent where there is nothing to reach.
   */
  checkBucket?(): Promise<void>;
}

export interface PresignOptions {
  /** How long the URL stays valid, from `signedAt`: 1 second to 7 days (604800), the SigV4 maximum. */
  readonly expiresInSeconds: number;
  /**
   * The signing time, now by default. The same key, options and credentials give the same URL, so a caller
   * that rounds this down (to the hour, say) hands out one cacheable URL per period.
   */
  readonly signedAt?: Date;
}

/**
 * Signed, expiring links to result videos (docs/decisions.md#result-videos). Either this server's own link,
 * which carries the storage key's task id, an expiry and an HMAC over both and which the results route checks
 * without a database read; or, with object storage, a URL presigned by the storage, which clients fetch from
 * the bucket directly.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { resultKey } from '../domain/storage-keys.js';
import type { Storage } from '../ports/storage.js';

/**
 * The link to a completed task's video, as `results[0]` carries it; `requestOrigin` is the origin of the request
 * it answers (http/request-origin.ts), absent in callbacks.
 */
export type ResultUrl = (taskId: string, requestOrigin?: string) => Promise<string>;

const EXPIRY_BUCKET_SECONDS = 3600;

/**
 * Links kept signed; past this the oldest go first (a miss only costs an HMAC). The tasks being polled right
 * now are a few hundred at most; ten thousand kept links were about 3 MB of a server's memory for nothing.
 */
const SIGNED_LINKS_KEPT = 1000;

export interface VerifiedLink {
  readonly taskId: string;
  readonly key: string;
}

export class ResultLinks {
  readonly #publicUrl: (requestOrigin?: string) => string;
  readonly #secret: string;
  readonly #ttlSeconds: number;
  readonly #now: () => number;
  readonly #keep: number;
  /** The last link made for each task: polls in the same hour get the same one without signing it again. */
  readonly #signed = new Map<string, string>();

  constructor(options: {
    /** The base of the links in the answer to a request sent to `requestOrigin`. */
    publicUrl: (requestOrigin?: string) => string;
    secret: string;
    ttlSeconds: number;
    now?: () => number;
    /** Links kept signed at most; default 1000. */
    keep?: number;
  }) {
    this.#publicUrl = options.publicUrl;
    this.#secret = options.secret;
    this.#ttlSeconds = options.ttlSeconds;
    this.#now = options.now ?? Date.now;
    this.#keep = options.keep ?? SIGNED_LINKS_KEPT;
  }

  /** How many signed links are kept now. */
  get kept(): number {
    return this.#signed.size;
  }

  /**
   * The expiry is rounded up to the next hour so that polling returns the same URL for an hour (cacheable)
   * while every link stays valid for at least the configured time.
   */
  urlFor(taskId: string, requestOrigin?: string): string {
    const earliest = Math.floor(this.#now() / 1000) + this.#ttlSeconds;
    const expires = Math.ceil(earliest / EXPIRY_BUCKET_SECONDS) * EXPIRY_BUCKET_SECONDS;
    const base = `${this.#publicUrl(requestOrigin)}/v1/results/${taskId}.mp4?expires=${expires}&signature=`;
    const kept = this.#signed.get(taskId);
    if (kept?.startsWith(base)) return kept;
    const url = base + this.#sign(taskId, expires);
    if (this.#signed.size >= this.#keep) this.#signed.delete(this.#signed.keys().next().value as string);
    this.#signed.set(taskId, url);
    return url;
  }

  /** The link's target when the signature matches and it has not expired. */
  verify(taskId: string, expires: string, signature: string): VerifiedLink | undefined {
    const expiresAt = Number(expires);
    if (!Number.isInteger(expiresAt) || expiresAt * 1000 < this.#now()) return undefined;
    const expected = Buffer.from(this.#sign(taskId, expiresAt));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
    return { taskId, key: resultKey(taskId) };
  }

  /** As a `ResultUrl`. */
  get resultUrl(): ResultUrl {
    return async (taskId, requestOrigin) => this.urlFor(taskId, requestOrigin);
  }

  #sign(taskId: string, expires: number): string {
    return createHmac('sha256', this.#secret)
      .update(`${resultKey(taskId)}\n${expires}`)
      .digest('base64url');
  }
}

/**
 * Presigned storage URLs with the same promise as `ResultLinks`: valid for at least `ttlSeconds`, and one URL
 * per hour (signed at the start of the hour, so polling sees a stable, cacheable URL).
 */
export function presignedResultUrl(
  storage: Required<Pick<Storage, 'presignedUrl'>>,
  ttlSeconds: number,
  now: () => number = Date.now,
): ResultUrl {
  return (taskId) => {
    const hourStart = Math.floor(now() / 1000 / EXPIRY_BUCKET_SECONDS) * EXPIRY_BUCKET_SECONDS;
    return storage.presignedUrl(resultKey(taskId), {
      signedAt: new Date(hourStart * 1000),
      expiresInSeconds: ttlSeconds + EXPIRY_BUCKET_SECONDS,
    });
  };
}

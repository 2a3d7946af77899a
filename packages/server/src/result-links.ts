/**
 * Signed, expiring links to result videos (decisions.md §6). The link carries the storage key's task id,
 * an expiry and an HMAC over both; the results route checks it without a database read.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

const EXPIRY_BUCKET_SECONDS = 3600;

export interface VerifiedLink {
  readonly taskId: string;
  readonly key: string;
}

export function resultKey(taskId: string): string {
  return `results/${taskId}.mp4`;
}

export class ResultLinks {
  readonly #publicUrl: () => string;
  readonly #secret: string;
  readonly #ttlSeconds: number;
  readonly #now: () => number;

  constructor(options: { publicUrl: () => string; secret: string; ttlSeconds: number; now?: () => number }) {
    this.#publicUrl = options.publicUrl;
    this.#secret = options.secret;
    this.#ttlSeconds = options.ttlSeconds;
    this.#now = options.now ?? Date.now;
  }

  /**
   * The expiry is rounded up to the next hour so that polling returns the same URL for an hour (cacheable)
   * while every link stays valid for at least the configured time.
   */
  urlFor(taskId: string): string {
    const earliest = Math.floor(this.#now() / 1000) + this.#ttlSeconds;
    const expires = Math.ceil(earliest / EXPIRY_BUCKET_SECONDS) * EXPIRY_BUCKET_SECONDS;
    const signature = this.#sign(taskId, expires);
    return `${this.#publicUrl()}/v1/results/${taskId}.mp4?expires=${expires}&signature=${signature}`;
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

  #sign(taskId: string, expires: number): string {
    return createHmac('sha256', this.#secret)
      .update(`${resultKey(taskId)}\n${expires}`)
      .digest('base64url');
  }
}

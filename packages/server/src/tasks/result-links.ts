/**
 * Signed, expiring links to result videos and their last frames (docs/decisions.md#result-videos). Either this
 * server's own link, which carries the file's name, an expiry and an HMAC over its storage key and the expiry,
 * and which the results route checks without a database read; or, with object storage, a URL presigned by the storage, which clients fetch from
 * the bucket directly.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { lastFrameKey, resultKey } from '../domain/storage-keys.js';
import type { Storage } from '../ports/storage.js';

/** A completed task's files: its video (`results[0]`), and its last frame (`results[1]`, `return_last_frame`). */
export type ResultFile = 'video' | 'last_frame';

/** Where `file` of the task is in storage. */
export function resultFileKey(taskId: string, file: ResultFile): string {
  return file === 'video' ? resultKey(taskId) : lastFrameKey(taskId);
}

/** The file's name in its link: `{task id}.mp4`, `{task id}-last-frame.png`. */
function linkName(taskId: string, file: ResultFile): string {
  return file === 'video' ? `${taskId}.mp4` : `${taskId}-last-frame.png`;
}

/** The task and file a link's name stands for; undefined for any other name. */
function parseLinkName(name: string): { taskId: string; file: ResultFile } | undefined {
  if (name.endsWith('-last-frame.png')) {
    return { taskId: name.slice(0, -'-last-frame.png'.length), file: 'last_frame' };
  }
  if (name.endsWith('.mp4')) return { taskId: name.slice(0, -'.mp4'.length), file: 'video' };
  return undefined;
}

/**
 * The link to a completed task's `file` (its video unless said), as `results` carries it; `requestOrigin` is the
 * origin of the request it answers (http/request-origin.ts), absent in callbacks.
 */
export type ResultUrl = (taskId: string, requestOrigin?: string, file?: ResultFile) => Promise<string>;

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
  /** The last link made for each file: polls in the same hour get the same one without signing it again. */
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
  urlFor(taskId: string, requestOrigin?: string, file: ResultFile = 'video'): string {
    const earliest = Math.floor(this.#now() / 1000) + this.#ttlSeconds;
    const expires = Math.ceil(earliest / EXPIRY_BUCKET_SECONDS) * EXPIRY_BUCKET_SECONDS;
    const key = resultFileKey(taskId, file);
    const base = `${this.#publicUrl(requestOrigin)}/v1/results/${linkName(taskId, file)}?expires=${expires}&signature=`;
    const kept = this.#signed.get(key);
    if (kept?.startsWith(base)) return kept;
    const url = base + this.#sign(key, expires);
    if (this.#signed.size >= this.#keep) this.#signed.delete(this.#signed.keys().next().value as string);
    this.#signed.set(key, url);
    return url;
  }

  /**
   * The target of the link to `name` (`{task id}.mp4`, `{task id}-last-frame.png`) when the signature matches
   * and it has not expired.
   */
  verify(name: string, expires: string, signature: string): VerifiedLink | undefined {
    const parsed = parseLinkName(name);
    const expiresAt = Number(expires);
    if (!parsed || !Number.isInteger(expiresAt) || expiresAt * 1000 < this.#now()) return undefined;
    const key = resultFileKey(parsed.taskId, parsed.file);
    const expected = Buffer.from(this.#sign(key, expiresAt));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
    return { taskId: parsed.taskId, key };
  }

  /** As a `ResultUrl`. */
  get resultUrl(): ResultUrl {
    return async (taskId, requestOrigin, file) => this.urlFor(taskId, requestOrigin, file);
  }

  /** Over the storage key, so a link to one file never opens another. */
  #sign(key: string, expires: number): string {
    return createHmac('sha256', this.#secret).update(`${key}\n${expires}`).digest('base64url');
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
  return (taskId, _origin, file = 'video') => {
    const hourStart = Math.floor(now() / 1000 / EXPIRY_BUCKET_SECONDS) * EXPIRY_BUCKET_SECONDS;
    return storage.presignedUrl(resultFileKey(taskId, file), {
      signedAt: new Date(hourStart * 1000),
      expiresInSeconds: ttlSeconds + EXPIRY_BUCKET_SECONDS,
    });
  };
}

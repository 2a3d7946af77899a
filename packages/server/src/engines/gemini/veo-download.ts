/**
 * Downloads the video Veo made: `GET {video.uri}` with the key in `x-goog-api-key`, following redirects, as
 * the documentation's `curl -L -H "x-goog-api-key: …"` and the SDKs do (the file service answers with a
 * redirect to storage). undici would carry every header but `Authorization` and `Cookie` along a redirect,
 * so redirects are followed here, hop by hop:
 *
 * - only to the same scheme, and only to the same origin or to a Google host (`*.googleapis.com`,
 *   `*.googleusercontent.com`); anything else fails the task rather than fetch from an unexpected place;
 * - the key goes only to the configured base URL's origin and to `https://generativelanguage.googleapis.com`
 *   (the API's own URIs, which a proxy in `base_url` may pass on), never to storage or any other host.
 *
 * Transient failures (429, 5xx, a dropped connection) start the download again from the URI, with backoff,
 * within the task's time limit. The video is kept for 2 days after it is made; it is fetched at once.
 */
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Dispatcher, request } from 'undici';
import { megabytes } from '../../assets/megabytes.js';
import { TaskFailure } from '../../domain/errors.js';
import { parseRetryAfter } from '../../outbound/retry-after.js';
import { DEFAULT_MAX_RESULT_BYTES } from '../upstream-file.js';
import { isTransientStatus, type UpstreamOptions, UpstreamRefusal } from '../upstream-request.js';
import { describeGoogleError, parseGoogleError } from './google-error.js';

export interface VeoDownload {
  /** `video.uri` from the finished operation. */
  readonly uri: string;
  /** Where the video is written. */
  readonly path: string;
  readonly apiKey: string;
  /** The configured base URL; its origin is given the key. */
  readonly baseUrl: string;
  readonly maxBytes?: number;
}

const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const GOOGLE_HOST = /(^|\.)(googleapis|googleusercontent)\.com$/;
/** The Gemini API's own host, whose URIs a proxy in `base_url` may pass on unchanged. */
const GEMINI_API_HOST = 'generativelanguage.googleapis.com';
const ATTEMPT_TIMEOUT_MS = 60_000;
const BASE_DELAY_MS = 500;
const MAX_DELAY_MS = 30_000;

/** A failure worth starting the download again for. */
class Transient extends Error {
  constructor(
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

class TooLarge extends Error {}

function keyGoesTo(url: URL, base: URL): boolean {
  return url.origin === base.origin || (url.protocol === 'https:' && url.hostname === GEMINI_API_HOST);
}

function redirectFollowed(from: URL, to: URL): boolean {
  return to.protocol === from.protocol && (to.origin === from.origin || GOOGLE_HOST.test(to.hostname));
}

async function save(
  body: Dispatcher.ResponseData['body'],
  download: VeoDownload,
  signal: AbortSignal,
): Promise<void> {
  const maxBytes = download.maxBytes ?? DEFAULT_MAX_RESULT_BYTES;
  let seen = 0;
  async function* limited(source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    for await (const chunk of source) {
      seen += chunk.length;
      if (seen > maxBytes) throw new TooLarge();
      yield chunk;
    }
  }
  await pipeline(body, limited, createWriteStream(download.path), { signal });
}

/** One try: the URI and its redirects, then the video to disk. */
async function downloadOnce(download: VeoDownload, options: UpstreamOptions): Promise<void> {
  const { label, signal } = options;
  const base = new URL(download.baseUrl);
  let url = new URL(download.uri);
  for (let hops = 0; ; hops++) {
    let response: Dispatcher.ResponseData;
    try {
      response = await request(url, {
        method: 'GET',
        headers: keyGoesTo(url, base) ? { 'x-goog-api-key': download.apiKey } : {},
        signal,
        dispatcher: options.dispatcher,
        headersTimeout: options.attemptTimeoutMs ?? ATTEMPT_TIMEOUT_MS,
        bodyTimeout: options.attemptTimeoutMs ?? ATTEMPT_TIMEOUT_MS,
      });
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      const reason = error instanceof Error ? error.message : String(error);
      throw new Transient(`${label}: downloading the video: GET ${url.pathname} failed: ${reason}`);
    }
    const status = response.statusCode;
    if (REDIRECT_STATUSES.has(status)) {
      await response.body.dump();
      const location = response.headers.location;
      const next = typeof location === 'string' ? new URL(location, url) : undefined;
      if (!next || hops >= MAX_REDIRECTS || !redirectFollowed(url, next)) {
        const where = next ? ` to ${next.protocol}//${next.host}` : '';
        throw new TaskFailure(
          'upstream_error',
          `${label}: downloading the video: GET ${url.pathname} answered HTTP ${status}, a redirect${where} that is not followed (only ${MAX_REDIRECTS} redirects, in the same scheme, to the same host or a Google one).`,
        );
      }
      url = next;
      continue;
    }
    if (status >= 200 && status < 300) {
      try {
        await save(response.body, download, signal);
        return;
      } catch (error) {
        await rm(download.path, { force: true });
        if (signal.aborted) throw signal.reason;
        if (error instanceof TooLarge) {
          const most = megabytes(download.maxBytes ?? DEFAULT_MAX_RESULT_BYTES);
          throw new TaskFailure('upstream_error', `${label}: the video is larger than ${most}.`);
        }
        const reason = error instanceof Error ? error.message : String(error);
        throw new Transient(`${label}: downloading the video failed: ${reason}`);
      }
    }
    const error = parseGoogleError(status, await response.body.text().catch(() => ''));
    const problem = `${label}: downloading the video: GET ${url.pathname} answered ${describeGoogleError(error)}`;
    if (isTransientStatus(status)) {
      const header = response.headers['retry-after'];
      const retryAfter = parseRetryAfter(Array.isArray(header) ? header[0] : header, Date.now());
      throw new Transient(problem, retryAfter ?? error.retryDelayMs);
    }
    const gone = status === 404 ? ' (the Gemini API keeps a generated video for 2 days)' : '';
    throw new UpstreamRefusal(status, `${problem}${gone}`);
  }
}

export async function downloadVeoVideo(download: VeoDownload, options: UpstreamOptions): Promise<void> {
  const { signal } = options;
  for (let attempt = 1; ; attempt++) {
    let problem: Transient;
    try {
      await downloadOnce(download, options);
      return;
    } catch (error) {
      if (!(error instanceof Transient)) throw error;
      problem = error;
    }
    const backoff = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** (attempt - 1)) * (0.5 + Math.random() / 2);
    const delay = Math.max(backoff, problem.retryAfterMs ?? 0);
    const outOfAttempts = options.maxAttempts !== undefined && attempt >= options.maxAttempts;
    if (outOfAttempts || Date.now() + delay >= options.deadline) {
      throw new TaskFailure(
        'upstream_unavailable',
        `${problem.message} (gave up after ${attempt} attempt${attempt === 1 ? '' : 's'})`,
      );
    }
    await sleep(delay, undefined, { signal }).catch(() => {
      throw signal.reason;
    });
  }
}

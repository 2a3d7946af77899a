/**
 * Downloads one reference asset to a file: `storage:` references (inline assets stored at creation) are
 * copied from storage, base64 `data:` URLs are decoded, http(s) URLs are fetched through
 * the guarded dispatcher with a byte limit, a total time limit and at most 3 redirects. Every failure is a
 * `TaskFailure('asset_fetch_failed')` whose message starts with the field and index (`image_urls[1]: HTTP 404`).
 */
import { createWriteStream } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { type Dispatcher, request } from 'undici';
import { TaskFailure } from '../domain/errors.js';
import { OutboundBlockedError } from '../outbound/guarded-dispatcher.js';
import type { Storage } from '../ports/storage.js';
import { DataUrlProblem, decodeDataUrl } from './data-url.js';
import { megabytes } from './megabytes.js';
import { storedAssetKey } from './stored-assets.js';

export const MAX_REDIRECTS = 3;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export interface DownloadLimits {
  readonly dispatcher: Dispatcher;
  readonly maxBytes: number;
  readonly timeoutMs: number;
  /** Where assets stored at task creation (`storage:` references) are read from. */
  readonly storage?: Storage;
}

export interface AssetSource {
  /** `image_urls[1]`: how messages name the asset. */
  readonly label: string;
  readonly url: string;
}

class DownloadProblem extends Error {}

async function saveDataUrl(url: string, path: string, maxBytes: number): Promise<void> {
  let bytes: Buffer;
  try {
    bytes = decodeDataUrl(url, maxBytes).bytes;
  } catch (error) {
    throw error instanceof DataUrlProblem ? new DownloadProblem(error.message) : error;
  }
  await writeFile(path, bytes);
}

/** An asset moved into storage at creation (`stored-assets.ts`). */
async function copyStored(key: string, path: string, limits: DownloadLimits, signal: AbortSignal) {
  if (!limits.storage) throw new DownloadProblem('no storage to read the asset from');
  const found = await limits.storage.stat(key);
  if (!found) throw new DownloadProblem('the stored asset is missing');
  if (found.size > limits.maxBytes) throw new DownloadProblem(`larger than ${megabytes(limits.maxBytes)}`);
  await pipeline(await limits.storage.read(key), createWriteStream(path), { signal });
}

/** Passes bytes through until more than `maxBytes` have come, then fails the pipeline. */
class ByteLimit extends Transform {
  seen = 0;

  constructor(private readonly maxBytes: number) {
    super();
  }

  override _transform(
    chunk: Buffer,
    _encoding: BufferEncoding,
    callback: (error?: Error | null, data?: Buffer) => void,
  ): void {
    this.seen += chunk.length;
    if (this.seen > this.maxBytes) callback(new DownloadProblem(`larger than ${megabytes(this.maxBytes)}`));
    else callback(null, chunk);
  }
}

async function fetchToFile(
  start: string,
  path: string,
  limits: DownloadLimits,
  signal: AbortSignal,
): Promise<void> {
  let url = new URL(start);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new DownloadProblem(`${url.protocol} URLs are not accepted`);
  }
  for (let hop = 0; ; hop++) {
    const response = await request(url, {
      method: 'GET',
      dispatcher: limits.dispatcher,
      signal,
      headers: { 'user-agent': 'videogen (asset fetch)', accept: '*/*' },
    });
    if (REDIRECT_STATUSES.has(response.statusCode)) {
      await response.body.dump();
      const location = response.headers.location;
      if (typeof location !== 'string')
        throw new DownloadProblem(`HTTP ${response.statusCode} without a Location`);
      if (hop >= MAX_REDIRECTS) throw new DownloadProblem(`more than ${MAX_REDIRECTS} redirects`);
      url = new URL(location, url);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        throw new DownloadProblem(`redirected to a ${url.protocol} URL`);
      }
      continue;
    }
    if (response.statusCode < 200 || response.statusCode > 299) {
      await response.body.dump();
      throw new DownloadProblem(`HTTP ${response.statusCode}`);
    }
    const declared = Number(response.headers['content-length']);
    if (declared > limits.maxBytes) {
      await response.body.dump();
      throw new DownloadProblem(`larger than ${megabytes(limits.maxBytes)}`);
    }
    const counter = new ByteLimit(limits.maxBytes);
    await pipeline(response.body, counter, createWriteStream(path), { signal });
    if (counter.seen === 0) throw new DownloadProblem('the response body is empty');
    return;
  }
}

function findCause<T>(error: unknown, type: new (...args: never[]) => T): T | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    if (current instanceof type) return current;
    current = current.cause;
  }
  return undefined;
}

function reasonOf(error: unknown, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) {
    const limit = timeoutMs < 1000 ? `${timeoutMs} ms` : `${Math.round((timeoutMs / 1000) * 10) / 10} s`;
    return `no complete answer within ${limit}`;
  }
  const problem = findCause(error, DownloadProblem) ?? findCause(error, OutboundBlockedError);
  if (problem) return problem.message;
  const code = (error as { code?: string }).code;
  const message = error instanceof Error ? error.message : String(error);
  return code && !message.includes(code) ? `${message} (${code})` : message;
}

/** Writes the asset at `path`; removes any partial file on failure. */
export async function downloadAsset(
  source: AssetSource,
  path: string,
  limits: DownloadLimits,
  signal: AbortSignal,
): Promise<void> {
  const timeout = AbortSignal.timeout(limits.timeoutMs);
  const combined = AbortSignal.any([signal, timeout]);
  try {
    const storedKey = storedAssetKey(source.url);
    if (storedKey !== undefined) await copyStored(storedKey, path, limits, combined);
    else if (/^data:/i.test(source.url)) await saveDataUrl(source.url, path, limits.maxBytes);
    else await fetchToFile(source.url, path, limits, combined);
  } catch (error) {
    await rm(path, { force: true });
    if (signal.aborted) throw signal.reason;
    const reason = reasonOf(error, timeout.aborted, limits.timeoutMs);
    throw new TaskFailure('asset_fetch_failed', `${source.label}: ${reason}`, { cause: error });
  }
}

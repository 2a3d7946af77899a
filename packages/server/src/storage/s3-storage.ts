/**
 * The `Storage` port on an S3-compatible bucket (AWS S3, MinIO, R2, …), chosen by
 * `VIDEOGEN_STORAGE_URL=s3://bucket[/prefix][?force_path_style=true]`. The object under key `k` is
 * `<prefix>/k` in the bucket (`k` without a prefix); its content type is the object's Content-Type.
 *
 * Everything else is the AWS SDK's own configuration, which the SDK reads itself:
 * - endpoint: `AWS_ENDPOINT_URL_S3`, else `AWS_ENDPOINT_URL`, else the profile's `endpoint_url`, else AWS;
 * - region: `AWS_REGION` or the profile's `region`. Required; stores that ignore it take any (`us-east-1`);
 * - credentials: the default chain (environment, `~/.aws` profiles, SSO, web identity, container and
 *   instance roles). They need GetObject, PutObject, DeleteObject and ListBucket: without ListBucket, S3
 *   answers 403 rather than 404 for a missing key, and `stat` throws instead of returning undefined;
 * - checksums: `AWS_REQUEST_CHECKSUM_CALCULATION` and `AWS_RESPONSE_CHECKSUM_VALIDATION`.
 *
 * `force_path_style=true` addresses objects as `<endpoint>/<bucket>/<key>` instead of
 * `<bucket>.<endpoint host>/<key>`; most self-hosted stores need it. It is on the URL, beside the bucket it
 * describes, because the SDK reads no variable for it.
 *
 * A put is one streamed PutObject, so an object can be up to 5 GiB (S3's limit for a single PUT). By default
 * the SDK sends a stream as `Content-Encoding: aws-chunked` with a trailing checksum; a store that does not
 * know that encoding keeps the framing as part of the object. Each put therefore checks the stored size and
 * fails, naming `AWS_REQUEST_CHECKSUM_CALCULATION=when_required`, rather than keep a corrupt video.
 *
 * Presigned URLs last at most 7 days, and no longer than the credentials that signed them: with temporary
 * credentials (roles, SSO) they stop working when the session ends, whatever their X-Amz-Expires says.
 */
import { open } from 'node:fs/promises';
import { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  type GetObjectCommandOutput,
  HeadBucketCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { ByteRange, PresignOptions, Storage, StoredObject } from '../ports/storage.js';
import { MAX_PRESIGN_SECONDS } from './presign-limit.js';
import { assertByteRange, assertContentType, assertStorageKey } from './storage-key.js';

export interface S3Location {
  readonly bucket: string;
  /** Without leading or trailing slash; empty for the whole bucket. */
  readonly prefix: string;
  readonly forcePathStyle: boolean;
}

const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** Parses `s3://bucket[/prefix][?force_path_style=true|false]`; throws an `Error` saying what is wrong. */
export function parseS3Url(url: string): S3Location {
  // Split by hand: WHATWG URL parsing would quietly resolve `a/../b` to `b`.
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1];
  if (scheme !== undefined && scheme.toLowerCase() !== 's3') {
    throw new Error(`an S3 storage URL starts with s3://, not ${scheme}:.`);
  }
  const parts = /^s3:\/\/([^/?#]*)([^?#]*)(?:\?([^#]*))?(#.*)?$/i.exec(url);
  if (!parts) throw new Error('an S3 storage URL looks like s3://bucket/optional/prefix.');
  const [, authority = '', path = '', query = '', fragment] = parts;
  // Not echoed: whatever is there might be a secret.
  if (authority.includes('@')) {
    throw new Error('an S3 storage URL carries no credentials; they come from the AWS environment.');
  }
  if (authority.includes(':')) {
    throw new Error('an S3 storage URL names a bucket, not a host and port; set AWS_ENDPOINT_URL_S3.');
  }
  if (fragment !== undefined) throw new Error('an S3 storage URL has no #fragment.');
  if (!BUCKET_NAME.test(authority)) {
    throw new Error(
      `${JSON.stringify(authority)} is no S3 bucket name (3 to 63 lowercase letters, digits, dots and hyphens).`,
    );
  }

  let forcePathStyle = false;
  for (const [name, value] of new URLSearchParams(query)) {
    if (name !== 'force_path_style') {
      throw new Error(
        `unknown S3 storage URL parameter ${JSON.stringify(name)}; the one known is force_path_style.`,
      );
    }
    if (value !== 'true' && value !== 'false') {
      throw new Error(`force_path_style is true or false, not ${JSON.stringify(value)}.`);
    }
    forcePathStyle = value === 'true';
  }

  const raw = path.replace(/^\//, '');
  let prefix = '';
  if (raw) {
    try {
      prefix = decodeURIComponent(raw.endsWith('/') ? raw.slice(0, -1) : raw);
    } catch {
      throw new Error('the S3 key prefix is not valid percent-encoded UTF-8.');
    }
    try {
      assertStorageKey(prefix);
    } catch {
      throw new Error(
        `${JSON.stringify(prefix)} is no valid key prefix: plain segments separated by single slashes.`,
      );
    }
  }
  return { bucket: authority, prefix, forcePathStyle };
}

/**
 * The storage an `s3://` URL names, with a client configured by the AWS environment (see above).
 * `clientConfig` overrides it field by field.
 */
export function openS3Storage(url: string, clientConfig: S3ClientConfig = {}): S3Storage {
  const { bucket, prefix, forcePathStyle } = parseS3Url(url);
  // On Node.js 20 the client's construction prints the SDK's 9-line NodeVersionSupportWarning (its releases
  // after January 2027 will need Node.js 22) on every start. videogen supports Node.js 20 knowingly
  // (docs/decisions.md#the-aws-sdks-nodejs-20-warning): the SDK's own switch turns that one warning off,
  // unless the operator set the variable.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  return new S3Storage({ bucket, prefix, client: new S3Client({ forcePathStyle, ...clientConfig }) });
}

function statusOf(error: unknown): number | undefined {
  return error instanceof S3ServiceException ? error.$metadata.httpStatusCode : undefined;
}

/**
 * GetObject names a missing key `NoSuchKey`; HeadObject has no body to name anything, so its 404 (also what
 * a missing bucket answers) is `NotFound`.
 */
function isMissingKey(error: unknown): boolean {
  return (
    error instanceof S3ServiceException &&
    (error.name === 'NoSuchKey' || (error.name === 'NotFound' && statusOf(error) === 404))
  );
}

/**
 * Exactly `range` out of a ranged GET's body. HTTP lets a server ignore Range and answer 200 with the whole
 * object, and some S3 look-alikes answer with more than asked (s3rver sends everything for `bytes=0-0`);
 * the bytes asked for are cut out of whatever covers them, so a caller never passes on the wrong ones.
 */
function rangeOf(
  body: Readable,
  range: ByteRange,
  sent: { ContentRange?: string; ContentLength?: number },
): Readable {
  let first: number;
  let last: number;
  let total: number | undefined;
  const reported = sent.ContentRange && /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(sent.ContentRange);
  if (reported) {
    const [, from = '', to = '', size = '*'] = reported;
    [first, last, total] = [Number(from), Number(to), size === '*' ? undefined : Number(size)];
  } else if (sent.ContentRange === undefined && sent.ContentLength !== undefined) {
    [first, last, total] = [0, sent.ContentLength - 1, sent.ContentLength];
  } else {
    throw new Error(`The S3 store answered a range request with Content-Range ${String(sent.ContentRange)}.`);
  }
  if (total !== undefined && range.start >= total) {
    throw new RangeError(`The range ${range.start}-${range.end} starts past the ${total}-byte object.`);
  }
  const end = total === undefined ? range.end : Math.min(range.end, total - 1);
  if (first === range.start && last === end) return body;
  if (first > range.start || last < end) {
    throw new Error(`The S3 store sent bytes ${first}-${last} for the range ${range.start}-${range.end}.`);
  }
  return Readable.from(slice(body, range.start - first, end - range.start + 1), { objectMode: false });
}

async function* slice(source: Readable, skip: number, length: number): AsyncGenerator<Buffer> {
  let toSkip = skip;
  let left = length;
  try {
    for await (const chunk of source) {
      const bytes: Buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
      const piece = bytes.subarray(toSkip, toSkip + left);
      toSkip = Math.max(0, toSkip - bytes.length);
      left -= piece.length;
      if (piece.length > 0) yield piece;
      if (left === 0) return;
    }
  } finally {
    // Stops the download of the rest.
    source.destroy();
  }
  throw new Error('The S3 store ended the object before the end of the range.');
}

export class S3Storage implements Storage {
  readonly bucket: string;
  readonly prefix: string;
  readonly #client: S3Client;

  constructor(options: { bucket: string; prefix?: string; client: S3Client }) {
    if (!options.bucket) throw new Error('An S3 storage needs a bucket.');
    const prefix = options.prefix ?? '';
    if (prefix) assertStorageKey(prefix);
    this.bucket = options.bucket;
    this.prefix = prefix;
    this.#client = options.client;
  }

  #objectKey(key: string): string {
    assertStorageKey(key);
    return this.prefix ? `${this.prefix}/${key}` : key;
  }

  /** Throws unless the bucket exists and the credentials reach it: a check for start-up. */
  async checkBucket(): Promise<void> {
    try {
      await this.#client.send(new HeadBucketCommand({ Bucket: this.bucket }));
    } catch (error) {
      const status = statusOf(error);
      const problem =
        status === 404
          ? 'does not exist'
          : status === 403
            ? 'is not accessible with these credentials'
            : `cannot be reached (${error instanceof Error ? error.message : String(error)})`;
      throw new Error(`The S3 bucket ${JSON.stringify(this.bucket)} ${problem}.`, { cause: error });
    }
  }

  async putFile(key: string, localPath: string, contentType: string): Promise<void> {
    const objectKey = this.#objectKey(key);
    assertContentType(contentType);
    // Opened first so a missing file fails before any request, leaving the stored object alone.
    const handle = await open(localPath, 'r');
    const body = handle.createReadStream();
    let size: number;
    let etag: string | undefined;
    try {
      size = (await handle.stat()).size;
      ({ ETag: etag } = await this.#client.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: objectKey,
          Body: body,
          ContentLength: size,
          ContentType: contentType,
        }),
      ));
    } finally {
      // Closes the file if the request ended before reading it all.
      body.destroy();
    }
    const stored = await this.#head(objectKey);
    // Another writer of the same key (a run of the same task whose lease ran out) may have put its own object
    // since: that one is not this put's to judge, and deleting it would lose a good video.
    if (stored && etag !== undefined && stored.etag !== undefined && stored.etag !== etag) return;
    if (stored?.size !== size) {
      await this.delete(key);
      throw new Error(
        `The S3 store kept ${stored ? `${stored.size} bytes` : 'nothing'} for the ${size}-byte object ` +
          `${JSON.stringify(objectKey)}, and it was deleted. A store that does not take aws-chunked uploads ` +
          'needs AWS_REQUEST_CHECKSUM_CALCULATION=when_required.',
      );
    }
  }

  async stat(key: string): Promise<StoredObject | undefined> {
    const head = await this.#head(this.#objectKey(key));
    return head && { size: head.size, contentType: head.contentType, modifiedAt: head.modifiedAt };
  }

  async #head(objectKey: string): Promise<(StoredObject & { etag: string | undefined }) | undefined> {
    try {
      const head = await this.#client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: objectKey }));
      if (head.ContentLength === undefined || head.LastModified === undefined) {
        throw new Error(`The S3 store described ${JSON.stringify(objectKey)} without a size or a date.`);
      }
      return {
        size: head.ContentLength,
        contentType: head.ContentType ?? 'application/octet-stream',
        modifiedAt: head.LastModified.getTime(),
        etag: head.ETag,
      };
    } catch (error) {
      if (isMissingKey(error)) return undefined;
      throw error;
    }
  }

  async read(key: string, range?: ByteRange): Promise<Readable> {
    const objectKey = this.#objectKey(key);
    if (range) assertByteRange(range);
    let output: GetObjectCommandOutput;
    try {
      output = await this.#client.send(
        new GetObjectCommand({
          Bucket: this.bucket,
          Key: objectKey,
          // A range reaching past the end stops at the end; one starting past it is a 416.
          Range: range ? `bytes=${range.start}-${range.end}` : undefined,
        }),
      );
    } catch (error) {
      // The same errors as FileStorage's, so callers need not know which storage they have.
      if (isMissingKey(error)) {
        throw Object.assign(new Error(`No object under ${JSON.stringify(key)}.`, { cause: error }), {
          code: 'ENOENT',
        });
      }
      if (range && statusOf(error) === 416) {
        throw new RangeError(`The range ${range.start}-${range.end} starts past the end of the object.`, {
          cause: error,
        });
      }
      throw error;
    }
    const body = output.Body;
    if (!(body instanceof Readable))
      throw new Error(`The S3 store sent no body for ${JSON.stringify(objectKey)}.`);
    if (!range) return body;
    try {
      return rangeOf(body, range, output);
    } catch (error) {
      body.destroy();
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    // S3 answers a delete of a missing key with success.
    await this.#client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.#objectKey(key) }));
  }

  async presignedUrl(key: string, options: PresignOptions): Promise<string> {
    const objectKey = this.#objectKey(key);
    const { expiresInSeconds, signedAt } = options;
    if (
      !Number.isSafeInteger(expiresInSeconds) ||
      expiresInSeconds < 1 ||
      expiresInSeconds > MAX_PRESIGN_SECONDS
    ) {
      throw new RangeError(
        `A presigned URL lasts 1 to ${MAX_PRESIGN_SECONDS} seconds, not ${expiresInSeconds}.`,
      );
    }
    if (signedAt && Number.isNaN(signedAt.getTime())) throw new RangeError('Invalid signing time.');
    return getSignedUrl(this.#client, new GetObjectCommand({ Bucket: this.bucket, Key: objectKey }), {
      expiresIn: expiresInSeconds,
      ...(signedAt ? { signingDate: signedAt } : {}),
    });
  }
}

export { MAX_PRESIGN_SECONDS };

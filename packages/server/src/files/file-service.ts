/**
 * Uploaded files (`POST /v1/files`): an image, video or audio file is streamed to disk with a size limit,
 * recognised by its content (never by its name or declared type), stored under `uploads/<id>` and recorded
 * for its account. Requests then name it by its URL, which task creation turns into a storage reference.
 */
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { inspectAsset } from '../assets/inspect-asset.js';
import { megabytes } from '../assets/megabytes.js';
import { STORED_ASSET_SCHEME, storedAssetKey } from '../assets/stored-assets.js';
import { uploadContentType } from '../assets/upload-content-type.js';
import { ApiError } from '../domain/errors.js';
import type { GenerationParams } from '../domain/generation-request.js';
import type { AssetField } from '../domain/models.js';
import { uploadIdOf, uploadKey } from '../domain/storage-keys.js';
import type { TaskScope } from '../domain/task.js';
import {
  fileContentPath,
  isFileId,
  newFileId,
  type PublicFile,
  toPublicFile,
  type UploadKind,
} from '../domain/uploaded-file.js';
import type { Storage } from '../ports/storage.js';
import type { FileStore } from '../ports/store.js';

const KIND_FIELDS: readonly (readonly [UploadKind, AssetField])[] = [
  ['image', 'image_urls'],
  ['video', 'video_urls'],
  ['audio', 'audio_urls'],
];

export interface Upload {
  /** The file's bytes; an error on it (the request broke off, or its body is malformed) is the client's. */
  readonly stream: Readable;
  /** As the client sent it: made safe before it is stored. */
  readonly filename: string;
  /** As the client declared it: kept only when it is a well-formed type of the kind the content is. */
  readonly mimetype: string;
  /** True once the stream was cut at the size limit. */
  readonly truncated: () => boolean;
}

const MAX_FILENAME_LENGTH = 255;

/**
 * The filename as stored and answered: without control characters (NUL, which PostgreSQL's text refuses,
 * line breaks, escapes), with lone surrogates (which have no UTF-8 form) replaced, trimmed and cut to 255
 * characters without splitting one.
 */
export function safeFilename(raw: string): string {
  const cleaned = raw
    .replace(/\p{Cc}/gu, '')
    .replace(/\p{Cs}/gu, '\uFFFD')
    .trim();
  return Array.from(cleaned).slice(0, MAX_FILENAME_LENGTH).join('').trim();
}

/** The declared type, lower-cased without parameters, when it is a plain `kind/subtype`; else the generic type. */
function storedContentType(declared: string, kind: UploadKind): string {
  const type = (declared.split(';')[0] ?? '').trim().toLowerCase();
  return /^[a-z]+\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/.test(type) && type.startsWith(`${kind}/`)
    ? type
    : 'application/octet-stream';
}

/**
 * Writes `source` to `path`. When the source fails first, the upload is the client's fault: an error naming
 * `file`. When writing fails first, it is the server's, and the error goes on as it is. (Either way the
 * pipeline then destroys the other stream with the same error, so only the order tells them apart.)
 */
async function receive(source: Readable, path: string): Promise<void> {
  const sink = createWriteStream(path);
  const failed: { first?: 'source' | 'sink' } = source.errored ? { first: 'source' } : {};
  source.once('error', () => {
    failed.first ??= 'source';
  });
  sink.once('error', () => {
    failed.first ??= 'sink';
  });
  try {
    await pipeline(source, sink);
  } catch (error) {
    if (failed.first === 'sink') throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new ApiError('invalid_parameter', `The file could not be read from the request: ${reason}.`, {
      param: 'file',
    });
  }
}

export class FileService {
  readonly #store: Pick<FileStore, 'createFile' | 'getFile'>;
  readonly #storage: Storage;
  readonly #maxBytes: number;
  readonly #publicUrl: (requestOrigin?: string) => string;
  readonly #tempDir: string;

  constructor(options: {
    store: Pick<FileStore, 'createFile' | 'getFile'>;
    storage: Storage;
    maxBytes: number;
    /**
     * The base of the files' URLs in the answer to a request sent to `requestOrigin` (http/request-origin.ts);
     * without one, the base of the URLs the server hands out where no request is answered.
     */
    publicUrl: (requestOrigin?: string) => string;
    /** Where uploads are received before they are stored (this process's scratch-space.ts folder). */
    tempDir?: string;
  }) {
    this.#store = options.store;
    this.#storage = options.storage;
    this.#maxBytes = options.maxBytes;
    this.#publicUrl = options.publicUrl;
    this.#tempDir = options.tempDir ?? tmpdir();
  }

  get maxBytes(): number {
    return this.#maxBytes;
  }

  async upload(scope: TaskScope, upload: Upload, requestOrigin?: string): Promise<PublicFile> {
    const dir = await mkdtemp(join(this.#tempDir, 'videogen-upload-'));
    try {
      const path = join(dir, 'upload');
      await receive(upload.stream, path);
      if (upload.truncated()) {
        throw new ApiError('payload_too_large', `The file is larger than ${megabytes(this.#maxBytes)}.`, {
          param: 'file',
        });
      }
      const { size } = await stat(path);
      if (size === 0) throw new ApiError('invalid_parameter', 'The file is empty.', { param: 'file' });
      const kind = await this.#kindOf(path);
      const id = newFileId();
      // The type the content has; the declared one only where the content names none of the kind's types.
      const detected = await uploadContentType(path, kind);
      const contentType =
        detected === 'application/octet-stream' ? storedContentType(upload.mimetype, kind) : detected;
      const key = uploadKey(id);
      await this.#storage.putFile(key, path, contentType);
      // Without its row nothing refers to the object, nor ever deletes it.
      const file = await this.#store
        .createFile({
          id,
          accountId: scope.accountId,
          environment: scope.environment,
          kind,
          contentType,
          filename: safeFilename(upload.filename),
          bytes: size,
        })
        .catch(async (error: unknown) => {
          await this.#storage.delete(key).catch(() => undefined);
          throw error;
        });
      return toPublicFile(file, this.#publicUrl(requestOrigin));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  async get(scope: TaskScope, fileId: string, requestOrigin?: string): Promise<PublicFile> {
    const file = isFileId(fileId) ? await this.#store.getFile(fileId, scope) : undefined;
    if (!file)
      throw new ApiError('not_found', `No file ${fileId} exists for this API key.`, { param: 'file_id' });
    return toPublicFile(file, this.#publicUrl(requestOrigin));
  }

  /** The file's bytes and type, for its owner. */
  async content(scope: TaskScope, fileId: string): Promise<{ stream: Readable; file: PublicFile }> {
    const file = await this.get(scope, fileId);
    return { stream: await this.#storage.read(uploadKey(fileId)), file };
  }

  /**
   * Replaces the URLs of this server's uploaded files in a request by storage references, after checking that
   * each is the scope's and of the field's kind; other URLs pass through. This server's are those at the base
   * its answer to the request would have (`requestOrigin`'s, without a public URL) and at its default base.
   */
  async resolveUploads(
    scope: TaskScope,
    params: GenerationParams,
    requestOrigin?: string,
  ): Promise<GenerationParams> {
    const bases = new Set([this.#publicUrl(requestOrigin), this.#publicUrl()]);
    const resolved = { ...params };
    for (const [kind, field] of KIND_FIELDS) {
      resolved[field] = await Promise.all(
        params[field].map(async (url, index) => {
          const base = [...bases].find((candidate) => url.startsWith(`${candidate}/v1/files/`));
          if (base === undefined) return url;
          const id = url.slice(`${base}/v1/files/`.length).replace(/\/content$/, '');
          const file = isFileId(id) ? await this.#store.getFile(id, scope) : undefined;
          const param = `${field}[${index}]`;
          if (!file || url !== `${base}${fileContentPath(id)}`) {
            throw new ApiError(
              'invalid_parameter',
              `${param}: no uploaded file ${id} exists for this API key.`,
              {
                param,
              },
            );
          }
          if (file.kind !== kind) {
            throw new ApiError('invalid_parameter', `${param}: file ${id} is ${file.kind}, not ${kind}.`, {
              param,
            });
          }
          return `${STORED_ASSET_SCHEME}${uploadKey(id)}`;
        }),
      );
    }
    return resolved;
  }

  /**
   * The other way, for showing a stored request: the storage references of uploaded files back into their URLs,
   * at the base of the answer to a request sent to `requestOrigin`.
   */
  showUploads(params: GenerationParams, requestOrigin?: string): GenerationParams {
    const shown = { ...params };
    for (const [, field] of KIND_FIELDS) {
      shown[field] = params[field].map((url) => {
        const id = uploadIdOf(storedAssetKey(url) ?? '');
        return id === undefined ? url : `${this.#publicUrl(requestOrigin)}${fileContentPath(id)}`;
      });
    }
    return shown;
  }

  async #kindOf(path: string): Promise<UploadKind> {
    for (const [kind, field] of KIND_FIELDS) {
      const fits = await inspectAsset(path, field, 'file').then(
        () => true,
        () => false,
      );
      if (fits) return kind;
    }
    throw new ApiError(
      'unsupported_media_type',
      'The file is not an image (PNG, JPEG, WebP, GIF, BMP), video or audio file that the engines can read.',
      { param: 'file' },
    );
  }
}

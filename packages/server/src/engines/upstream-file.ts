/**
 * Fetches a file an engine's model server produced (a video's content, ComfyUI's `/view`, another videogen's
 * result link) to disk, with the retries of `upstream-request.ts` and a byte limit. A partial file is removed.
 */
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { megabytes } from '../assets/megabytes.js';
import { TaskFailure } from '../domain/errors.js';
import { type UpstreamCall, type UpstreamOptions, upstreamRequest } from './upstream-request.js';

/** A result larger than this is refused: 1080p H.264 of the longest duration is far smaller. */
export const DEFAULT_MAX_RESULT_BYTES = 2 * 1024 * 1024 * 1024;

class TooLarge extends Error {}

class ByteLimit extends Transform {
  #seen = 0;

  constructor(private readonly maxBytes: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.#seen += chunk.length;
    if (this.#seen > this.maxBytes) callback(new TooLarge());
    else callback(null, chunk);
  }
}

export async function fetchUpstreamFile(
  call: UpstreamCall,
  path: string,
  options: UpstreamOptions & { readonly maxBytes?: number },
): Promise<void> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_RESULT_BYTES;
  const response = await upstreamRequest(call, options);
  try {
    await pipeline(response.body, new ByteLimit(maxBytes), createWriteStream(path), {
      signal: options.signal,
    });
  } catch (error) {
    await rm(path, { force: true });
    if (options.signal.aborted) throw options.signal.reason;
    if (error instanceof TooLarge) {
      throw new TaskFailure(
        'upstream_error',
        `${options.label}: the result is larger than ${megabytes(maxBytes)}.`,
      );
    }
    const reason = error instanceof Error ? error.message : String(error);
    throw new TaskFailure(
      'upstream_unavailable',
      `${options.label}: downloading the result failed: ${reason}`,
      {
        cause: error,
      },
    );
  }
}

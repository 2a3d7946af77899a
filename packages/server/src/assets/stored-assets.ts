/**
 * Inline (`data:`) reference assets are moved into storage when a task is created, so the task row stays
 * small (a request may carry 20 MB of them) and every worker, on whatever machine, reads them from the same
 * bucket. The task keeps `storage:` references in their place; clients never see or send that form (the
 * request accepts only http(s), data: and asset:// URLs).
 */
import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GenerationParams } from '../domain/generation-request.js';
import type { AssetField } from '../domain/models.js';
import { inlineAssetKey, STORED_ASSET_SCHEME } from '../domain/storage-keys.js';
import type { Storage } from '../ports/storage.js';
import { DataUrlProblem, decodeDataUrl } from './data-url.js';

export { STORED_ASSET_SCHEME };

const FIELDS: readonly AssetField[] = ['image_urls', 'video_urls', 'audio_urls'];

export function storedAssetKey(url: string): string | undefined {
  return url.startsWith(STORED_ASSET_SCHEME) ? url.slice(STORED_ASSET_SCHEME.length) : undefined;
}

/**
 * Stores each decodable `data:` asset of `params` under their keys (domain/storage-keys.ts) and returns the
 * params with references to them; each goes through a file in `tempDir` on its way. One that cannot be decoded
 * stays inline, so the run fails it with the same message it always has (`image_urls[0]: the data: URL is
 * empty`).
 */
export async function storeInlineAssets(
  taskId: string,
  params: GenerationParams,
  storage: Storage,
  maxBytes: number,
  tempDir: string = tmpdir(),
): Promise<GenerationParams> {
  if (!FIELDS.some((field) => params[field].some((url) => url.startsWith('data:')))) return params;
  const out: Record<AssetField, string[]> = { image_urls: [], video_urls: [], audio_urls: [] };
  for (const field of FIELDS) {
    for (const [index, url] of params[field].entries()) {
      out[field].push(
        url.startsWith('data:') ? await storeOne(url, inlineAssetKey(taskId, field, index)) : url,
      );
    }
  }
  return { ...params, ...out };

  async function storeOne(url: string, key: string): Promise<string> {
    let decoded: ReturnType<typeof decodeDataUrl>;
    try {
      decoded = decodeDataUrl(url, maxBytes);
    } catch (error) {
      if (error instanceof DataUrlProblem) return url;
      throw error;
    }
    // The Storage port takes files: S3 uploads stream from one with a known length.
    const path = join(tempDir, `asset-${randomBytes(8).toString('hex')}`);
    try {
      await writeFile(path, decoded.bytes);
      await storage.putFile(key, path, decoded.contentType);
    } finally {
      await rm(path, { force: true });
    }
    return STORED_ASSET_SCHEME + key;
  }
}

/**
 * Downloads and inspects all reference assets of a request, two at a time; the first failure stops the rest.
 * An `asset://` id (Ark's asset library) is not downloaded: its local asset has no path, and the ark engine,
 * the only one it is routed to, sends the id on.
 */
import { join } from 'node:path';
import type { Dispatcher } from 'undici';
import { type GenerationParams, isAssetIdUrl } from '../domain/generation-request.js';
import type { AssetField } from '../domain/models.js';
import type { LocalAsset } from '../ports/engine.js';
import type { Storage } from '../ports/storage.js';
import { downloadAsset } from './download-asset.js';
import { inspectAsset } from './inspect-asset.js';

export const DEFAULT_ASSET_MAX_BYTES = 50 * 1024 * 1024;
export const DEFAULT_ASSET_TIMEOUT_MS = 60_000;
const CONCURRENCY = 2;

export interface AssetDownloadOptions {
  readonly workDir: string;
  readonly dispatcher: Dispatcher;
  readonly maxBytes: number;
  readonly timeoutMs: number;
  /** Where `storage:` references (inline assets stored at creation) are read from. */
  readonly storage?: Storage;
}

export interface DownloadedAssets {
  readonly images: LocalAsset[];
  readonly videos: LocalAsset[];
  readonly audios: LocalAsset[];
}

const FIELDS: readonly AssetField[] = ['image_urls', 'video_urls', 'audio_urls'];

export async function downloadAssets(
  params: GenerationParams,
  options: AssetDownloadOptions,
  signal: AbortSignal,
): Promise<DownloadedAssets> {
  signal.throwIfAborted();
  const jobs = FIELDS.flatMap((field) => params[field].map((url, index) => ({ field, index, url })));
  const results: LocalAsset[] = [];
  // Aborted by the caller's signal or by the first failure, which stops the other downloads.
  const controller = new AbortController();
  const stopAll = () => controller.abort(signal.reason);
  signal.addEventListener('abort', stopAll, { once: true });

  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      controller.signal.throwIfAborted();
      const job = jobs[next++]!;
      if (isAssetIdUrl(job.url)) {
        // An id in Ark's asset library: nothing to fetch, only an ark engine takes it, and passes it on.
        results.push({ field: job.field, index: job.index, url: job.url, path: '' });
        continue;
      }
      const label = `${job.field}[${job.index}]`;
      // Generated, never from the URL; no extension, so ffprobe judges the content, not a name.
      const path = join(options.workDir, `asset-${job.field}-${job.index}`);
      await downloadAsset({ label, url: job.url }, path, options, controller.signal);
      const facts = await inspectAsset(path, job.field, label, controller.signal);
      results.push({ field: job.field, index: job.index, url: job.url, path, ...facts });
    }
  };
  try {
    // allSettled: on failure, wait until the other worker has stopped writing into workDir (the caller
    // removes it next), then reject with the first failure or the caller's abort reason.
    await Promise.allSettled(
      Array.from({ length: Math.min(CONCURRENCY, jobs.length) }, () =>
        worker().catch((error: unknown) => {
          if (!controller.signal.aborted) controller.abort(error);
          throw error;
        }),
      ),
    );
  } finally {
    signal.removeEventListener('abort', stopAll);
  }
  if (signal.aborted) throw signal.reason;
  if (controller.signal.aborted) throw controller.signal.reason;
  const ordered = (field: AssetField) =>
    results.filter((a) => a.field === field).sort((a, b) => a.index - b.index);
  return { images: ordered('image_urls'), videos: ordered('video_urls'), audios: ordered('audio_urls') };
}

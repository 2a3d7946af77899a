/**
 * The prediction `input` of a job: the engines file's template (hosted/input-template.ts) filled with the job's
 * values, its duration, aspect ratio, resolution and size mapped onto the lists the model takes, and every
 * asset the filled input carries sent inline as a `data:` URL made from the worker's downloaded copy (a file
 * uploaded here is out of Replicate's reach). Assets the template leaves out are never read.
 *
 * Replicate takes files as data URLs, "only recommended if the file is less than 1MB"
 * (https://replicate.com/docs/topics/predictions/input-files), and its JavaScript SDK refuses to inline more
 * than 10,000,000 bytes for one prediction (replicate-javascript `lib/util.js`, `MAX_DATA_URI_SIZE`): past
 * that the job fails with `invalid_asset` before anything is sent.
 */
import { randomUUID } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { TaskFailure } from '../../domain/errors.js';
import type { LocalAsset, RenderJob } from '../../ports/engine.js';
import { inlineAsset } from '../hosted/asset-data-url.js';
import type { InputTemplate } from '../hosted/input-template.js';
import { type TemplateMapping, templateValues } from '../hosted/template-values.js';

/** The most asset bytes one prediction carries inline (the JavaScript SDK's limit). */
export const MAX_INLINE_BYTES = 10_000_000;

type AssetKind = 'images' | 'videos' | 'audios';

/** Calls `visit` on every string in `value`, replacing it with what `visit` returns. */
function mapStrings(value: unknown, visit: (text: string) => string): unknown {
  if (typeof value === 'string') return visit(value);
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, visit));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, mapStrings(item, visit)]));
  }
  return value;
}

export async function predictionInput(
  job: RenderJob,
  template: InputTemplate,
  mapping: TemplateMapping,
  label: string,
): Promise<Record<string, unknown>> {
  // The template is filled with stand-ins first, so that only the assets the input really carries are read.
  const nonce = randomUUID();
  const standIns = (kind: AssetKind, assets: readonly LocalAsset[]) =>
    assets.map((_, index) => `videogen-asset-${nonce}:${kind}:${index}`);
  const filled = template.fill(
    templateValues(
      job,
      {
        images: standIns('images', job.images),
        videos: standIns('videos', job.videos),
        audios: standIns('audios', job.audios),
      },
      mapping,
    ),
  );
  const standIn = new RegExp(`videogen-asset-${nonce}:(images|videos|audios):(\\d+)`, 'g');
  const carried = new Map<string, LocalAsset>();
  mapStrings(filled, (text) => {
    for (const [whole, kind, index] of text.matchAll(standIn)) {
      const asset = job[kind as AssetKind][Number(index)];
      if (asset) carried.set(whole, asset);
    }
    return text;
  });

  let total = 0;
  for (const asset of carried.values()) total += (await stat(asset.path)).size;
  if (total > MAX_INLINE_BYTES) {
    throw new TaskFailure(
      'invalid_asset',
      `${label}: the images, videos and audio files this model is sent come to ${total} bytes; Replicate takes ` +
        `at most ${MAX_INLINE_BYTES} bytes inline (as data: URLs). Send smaller files.`,
    );
  }
  const dataUrls = new Map<string, string>();
  for (const [whole, asset] of carried) dataUrls.set(whole, (await inlineAsset(asset)).dataUrl);
  return mapStrings(filled, (text) =>
    text.replace(standIn, (whole) => dataUrls.get(whole) ?? whole),
  ) as Record<string, unknown>;
}

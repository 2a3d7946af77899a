/**
 * The body of a job's request to a fal model: its input, filled from the engines file's template with the job's
 * values (hosted/input-template.ts; durations, ratios and resolutions mapped to the nearest the model takes,
 * hosted/template-values.ts) and its assets inline as `data:` URLs (the client's own URL may be a file uploaded
 * here, which fal cannot fetch). Only the assets the template has a place for are read and sent: with
 * `unsupported_inputs: drop` the others are left out here.
 */
import type { RenderJob } from '../../ports/engine.js';
import { inlineAsset } from '../hosted/asset-data-url.js';
import type { InputTemplate } from '../hosted/input-template.js';
import { templateValues } from '../hosted/template-values.js';
import type { FalOptions } from './fal-options.js';

async function dataUrls(assets: RenderJob['images'], most: number): Promise<string[]> {
  return Promise.all(assets.slice(0, most).map(async (asset) => (await inlineAsset(asset)).dataUrl));
}

export async function falInput(
  job: RenderJob,
  template: InputTemplate,
  options: FalOptions,
): Promise<Record<string, unknown>> {
  const takes = template.capabilities();
  const urls = {
    images: await dataUrls(job.images, Math.max(takes.referenceImages, takes.lastFrame ? 2 : 0)),
    videos: await dataUrls(job.videos, takes.referenceVideos),
    audios: await dataUrls(job.audios, takes.referenceAudios),
  };
  return template.fill(templateValues(job, urls, options));
}

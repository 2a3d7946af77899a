/**
 * A job as Runway's create request: `POST /v1/image_to_video` when the job has a first frame for the model,
 * `POST /v1/text_to_video` otherwise (with reference images, videos and audio where the model takes them).
 * The frame is mapped to the nearest `ratio` the model makes and the duration to the nearest it takes; the
 * result is conformed to the job afterwards. Inputs go inline as `data:` URIs, within Runway's size limits.
 */
import { stat } from 'node:fs/promises';
import { megabytes } from '../../assets/megabytes.js';
import { unsupportedInput } from '../../domain/engine-capabilities.js';
import { TaskFailure } from '../../domain/errors.js';
import type { LocalAsset, RenderJob } from '../../ports/engine.js';
import { inlineAsset } from '../hosted/asset-data-url.js';
import { chooseSeconds, chooseSize } from '../size-mapping.js';
import { modelCapabilities } from './runway-capabilities.js';
import { RUNWAY_MODELS, type RunwayModelId } from './runway-models.js';

export interface PromptImage {
  readonly uri: string;
  readonly position: 'first' | 'last';
}

export interface RunwayCreateBody {
  readonly model: RunwayModelId;
  readonly promptText: string;
  readonly ratio: string;
  readonly duration: number;
  /** One first frame as a string; a first and a last frame as positioned images. */
  readonly promptImage?: string | readonly PromptImage[];
  readonly seed?: number;
  readonly audio?: boolean;
  readonly references?: readonly { readonly uri: string }[];
  readonly referenceVideos?: readonly { readonly type: 'video'; readonly uri: string }[];
  readonly referenceAudio?: readonly { readonly type: 'audio'; readonly uri: string }[];
}

export interface RunwayCreateRequest {
  readonly path: 'v1/image_to_video' | 'v1/text_to_video';
  readonly body: RunwayCreateBody;
}

export interface RunwayRequestOptions {
  readonly engine: string;
  readonly label: string;
  readonly model: RunwayModelId;
  /** `unsupported_inputs: drop`: leave out what the model cannot take rather than fail. */
  readonly drop: boolean;
}

interface InlineRule {
  readonly noun: string;
  readonly typePrefix: string;
  /** The longest `data:` URI Runway takes for this kind (`maxLength` in its OpenAPI; 5 MB / 16 MB in its docs). */
  readonly maxChars: number;
}

const INLINE_RULES: Readonly<Record<LocalAsset['field'], InlineRule>> = {
  image_urls: { noun: 'image', typePrefix: 'image/', maxChars: 5_242_880 },
  video_urls: { noun: 'video', typePrefix: 'video/', maxChars: 16_777_216 },
  audio_urls: { noun: 'audio', typePrefix: 'audio/', maxChars: 16_777_216 },
};

/** `1280:720` ↔ `1280x720`, the form size-mapping.ts reads. */
function nearestRatio(job: RenderJob, ratios: readonly string[]): string {
  return chooseSize(
    job.frame,
    ratios.map((ratio) => ratio.replace(':', 'x')),
  ).replace('x', ':');
}

async function dataUri(asset: LocalAsset, label: string): Promise<string> {
  const rule = INLINE_RULES[asset.field];
  const name = `${rule.noun} ${asset.index + 1}`;
  const tooLarge = (chars: number) =>
    new TaskFailure(
      'invalid_asset',
      `${label}: ${name} is ${megabytes(chars)} as a data: URI; Runway takes ${rule.noun} inputs sent inline up to ${megabytes(rule.maxChars)}.`,
    );
  const { size } = await stat(asset.path);
  const base64Chars = Math.ceil(size / 3) * 4;
  // Checked on the file's size first, so that a large file is not read only to be refused.
  if (base64Chars > rule.maxChars) throw tooLarge(base64Chars);
  const inline = await inlineAsset(asset);
  if (!inline.contentType.startsWith(rule.typePrefix)) {
    throw new TaskFailure(
      'invalid_asset',
      `${label}: ${name} is not a file Runway takes as ${rule.noun} (its type is ${inline.contentType}).`,
    );
  }
  if (inline.dataUrl.length > rule.maxChars) throw tooLarge(inline.dataUrl.length);
  return inline.dataUrl;
}

async function inlineAll<T>(
  assets: readonly LocalAsset[],
  label: string,
  wrap: (uri: string) => T,
): Promise<T[]> {
  const uris = await Promise.all(assets.map((asset) => dataUri(asset, label)));
  return uris.map(wrap);
}

export async function runwayCreateRequest(
  job: RenderJob,
  options: RunwayRequestOptions,
): Promise<RunwayCreateRequest> {
  const { label } = options;
  const model = RUNWAY_MODELS[options.model];
  if (!options.drop) {
    const problem = unsupportedInput(job.model, job.params, modelCapabilities(model), options.engine);
    if (problem) throw new TaskFailure('invalid_asset', `${label}: ${problem.message}`);
  }
  const mode = job.model.mode;
  const frames = mode === 'image' ? job.images.slice(0, model.takesLastFrame ? 2 : 1) : [];
  const referenceMode = mode === 'reference';
  const images = referenceMode ? job.images.slice(0, model.references.images) : [];
  const videos = referenceMode ? job.videos.slice(0, model.references.videos) : [];
  const audios = referenceMode ? job.audios.slice(0, model.references.audios) : [];

  const common = {
    model: options.model,
    promptText: job.params.prompt,
    duration: chooseSeconds(job.params.duration, model.durations),
    ...(model.takesSeed ? { seed: job.params.seed } : {}),
    // Runway's default is to make sound, which costs more: sent either way.
    ...(model.takesAudio ? { audio: job.params.generate_audio } : {}),
  };

  const [first, last] = frames;
  if (first) {
    const firstUri = await dataUri(first, label);
    const promptImage = last
      ? [
          { uri: firstUri, position: 'first' as const },
          { uri: await dataUri(last, label), position: 'last' as const },
        ]
      : firstUri;
    return {
      path: 'v1/image_to_video',
      body: { ...common, promptImage, ratio: nearestRatio(job, model.imageRatios) },
    };
  }
  if (!model.textRatios) {
    throw new TaskFailure(
      'invalid_asset',
      `${label}: Runway's ${options.model} makes videos only from a first-frame image, and this ${mode}-mode job has none; route ${job.model.id} to an engine whose model takes text alone (gen4.5, veo3.1, seedance2).`,
    );
  }
  const references = await inlineAll(images, label, (uri) => ({ uri }));
  const referenceVideos = await inlineAll(videos, label, (uri) => ({ type: 'video' as const, uri }));
  const referenceAudio = await inlineAll(audios, label, (uri) => ({ type: 'audio' as const, uri }));
  return {
    path: 'v1/text_to_video',
    body: {
      ...common,
      ratio: nearestRatio(job, model.textRatios),
      ...(references.length > 0 ? { references } : {}),
      ...(referenceVideos.length > 0 ? { referenceVideos } : {}),
      ...(referenceAudio.length > 0 ? { referenceAudio } : {}),
    },
  };
}

/**
 * A job as the body of `POST /v1beta/models/{model}:predictLongRunning`, with exactly the fields the Gemini
 * API takes for the model (ai.google.dev/gemini-api/docs/video; python-genai `_GenerateVideosSource_to_mldev`,
 * `_GenerateVideosConfig_to_mldev`, `_Image_to_mldev`, `_VideoGenerationReferenceImage_to_mldev`):
 *
 *   {"instances": [{"prompt", "image", "lastFrame", "referenceImages": [{"image", "referenceType": "asset"}]}],
 *    "parameters": {"aspectRatio", "resolution", "durationSeconds"}}
 *
 * Image mode sends its first image as `image` and a second as `lastFrame`; reference mode sends its images as
 * `referenceImages`, never beside `image`. Images go inline (`bytesBase64Encoded`): PNG and JPEG as they are,
 * any other type re-encoded as PNG. Never sent: `seed` (the official SDKs refuse it for the Gemini API, it is
 * a Vertex AI parameter), `personGeneration` (the values accepted vary by region, account and date; left out
 * it is always accepted), `generateAudio` (refused; Veo 3 always makes sound), `sampleCount` (one video is the
 * default) and `enhancePrompt`.
 */
import { TaskFailure } from '../../domain/errors.js';
import type { LocalAsset, RenderJob } from '../../ports/engine.js';
import { inlineAsset } from '../hosted/asset-data-url.js';
import type { VeoModel } from './gemini-models.js';
import { type VeoAspectRatio, type VeoResolution, veoShape } from './veo-shape.js';

export interface VeoImage {
  readonly bytesBase64Encoded: string;
  readonly mimeType: string;
}

export interface VeoReferenceImage {
  readonly image: VeoImage;
  readonly referenceType: 'asset';
}

export interface VeoInstance {
  readonly prompt: string;
  readonly image?: VeoImage;
  readonly lastFrame?: VeoImage;
  readonly referenceImages?: readonly VeoReferenceImage[];
}

export interface VeoParameters {
  readonly aspectRatio: VeoAspectRatio;
  readonly resolution?: VeoResolution;
  readonly durationSeconds: number;
}

export interface VeoRequest {
  readonly instances: readonly [VeoInstance];
  readonly parameters: VeoParameters;
}

/** The job's assets in the roles Veo gives them. */
export interface VeoInputs {
  readonly firstFrame?: LocalAsset;
  readonly lastFrame?: LocalAsset;
  readonly referenceImages: readonly LocalAsset[];
}

export interface VeoRequestOptions {
  /** Names the engine in messages. */
  readonly label: string;
  readonly model: string;
  /** `unsupported_inputs: drop`: leave out what the model cannot take rather than fail. */
  readonly dropUnsupported: boolean;
}

const SENT_AS_IS = new Set(['image/png', 'image/jpeg']);

function notTaken(asset: LocalAsset, what: string, options: VeoRequestOptions): TaskFailure {
  return new TaskFailure(
    'invalid_asset',
    `${asset.field}[${asset.index}]: ${options.label} cannot send ${what} to ${options.model}.`,
  );
}

/**
 * Which of the job's assets go where. Without `dropUnsupported`, an input the model cannot take fails the
 * task (creation refuses such requests; this catches an engines file changed since); reference videos and
 * audio are never sent (Veo takes neither).
 */
export function veoInputs(job: RenderJob, veo: VeoModel, options: VeoRequestOptions): VeoInputs {
  const unsupported = (asset: LocalAsset | undefined, what: string): void => {
    if (asset && !options.dropUnsupported) throw notTaken(asset, what, options);
  };
  unsupported(job.videos[0], 'reference videos');
  unsupported(job.audios[0], 'reference audio');
  if (job.model.mode === 'image') {
    const [firstFrame, lastFrame] = job.images;
    if (!veo.lastFrame) unsupported(lastFrame, 'a last frame');
    return { firstFrame, lastFrame: veo.lastFrame ? lastFrame : undefined, referenceImages: [] };
  }
  if (job.model.mode === 'reference') {
    const most = veo.referenceImages;
    unsupported(job.images[most], most === 0 ? 'reference images' : `more than ${most} reference images`);
    return { referenceImages: job.images.slice(0, veo.referenceImages) };
  }
  return { referenceImages: [] };
}

/** An image asset as Veo's `Image`: PNG and JPEG as they are, anything else re-encoded as PNG. */
async function veoImage(asset: LocalAsset, label: string): Promise<VeoImage> {
  // Loaded with the first image: @napi-rs/canvas is about 20 MB of memory a process without images never needs.
  const { createCanvas, loadImage } = await import('@napi-rs/canvas');
  const inline = await inlineAsset(asset);
  if (SENT_AS_IS.has(inline.contentType)) {
    return { bytesBase64Encoded: inline.base64, mimeType: inline.contentType };
  }
  try {
    const image = await loadImage(Buffer.from(inline.base64, 'base64'));
    const canvas = createCanvas(image.width, image.height);
    canvas.getContext('2d').drawImage(image, 0, 0);
    const png = await canvas.encode('png');
    return { bytesBase64Encoded: png.toString('base64'), mimeType: 'image/png' };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new TaskFailure(
      'invalid_asset',
      `${asset.field}[${asset.index}]: ${label} cannot read this image (${reason}).`,
      { cause: error },
    );
  }
}

export async function veoRequest(
  job: RenderJob,
  veo: VeoModel,
  options: VeoRequestOptions,
): Promise<VeoRequest> {
  const inputs = veoInputs(job, veo, options);
  const shape = veoShape(job, veo, inputs.referenceImages.length > 0);
  const image = async (asset: LocalAsset | undefined): Promise<VeoImage | undefined> =>
    asset && (await veoImage(asset, options.label));
  const references = await Promise.all(
    inputs.referenceImages.map(
      async (asset): Promise<VeoReferenceImage> => ({
        image: await veoImage(asset, options.label),
        referenceType: 'asset',
      }),
    ),
  );
  const first = await image(inputs.firstFrame);
  const last = await image(inputs.lastFrame);
  const instance: VeoInstance = {
    prompt: job.params.prompt,
    ...(first && { image: first }),
    ...(last && { lastFrame: last }),
    ...(references.length > 0 && { referenceImages: references }),
  };
  const parameters: VeoParameters = {
    aspectRatio: shape.aspectRatio,
    ...(shape.resolution && { resolution: shape.resolution }),
    durationSeconds: shape.durationSeconds,
  };
  return { instances: [instance], parameters };
}

/**
 * OpenAI's video creation request (`CreateVideoJsonBody` / `CreateVideoMultipartBody` of openai/openai-openapi)
 * translated into this service's generation request, which the task use cases then validate like any other:
 *
 * - `model`: absent or one of OpenAI's Sora 2 names (`sora-2`, `sora-2-pro`, with or without a date) picks a
 *   model of this catalogue by mode (image-to-video with `input_reference`, else text-to-video) and speed
 *   (`sora-2`, OpenAI's fast one, the fast variant; `sora-2-pro` the standard one). Any other value is a model
 *   ID of this service, as given.
 * - `seconds` (a string, as OpenAI's: `"4"`, `"8"`, `"12"`; a whole number of seconds, an integer also taken) is
 *   `duration`, which the model's own durations then bound (4 to 15 for the built-in ones); OpenAI's default, 4.
 * - `size` (`WIDTHxHEIGHT`) is the `quality` and `aspect_ratio` whose frame (domain/frame-size.ts) is exactly that
 *   size: `720x1280` (OpenAI's default) is 720p 9:16, `1280x720` 720p 16:9, `1920x1080` 1080p 16:9. OpenAI's
 *   `1024x1792` and `1792x1024` are no frame of this service's and are refused, as is every size that is not one.
 * - `input_reference` (an uploaded image, or `{ image_url }` or `{ file_id }`) is `image_urls[0]`: the first frame.
 *
 * Errors name OpenAI's parameter (`seconds`, `size`, `input_reference`), never this service's.
 */
import { ApiError } from '../domain/errors.js';
import {
  ASPECT_RATIOS,
  type FixedAspectRatio,
  frameSize,
  QUALITIES,
  type Quality,
} from '../domain/frame-size.js';
import { getModel, LONGEST_DURATION, MODEL_IDS } from '../domain/models.js';

/** OpenAI's defaults: 4 seconds, portrait 720p. */
export const OPENAI_DEFAULT_SECONDS = 4;
export const OPENAI_DEFAULT_SIZE = '720x1280';

/** The fields OpenAI's creation takes; any other is `unknown_parameter`. */
const FIELDS = new Set(['model', 'prompt', 'input_reference', 'seconds', 'size']);

/** OpenAI's Sora 2 model names, with their snapshots (`sora-2-2025-10-06`). */
const SORA = /^sora-2(-pro)?(-\d{4}-\d{2}-\d{2})?$/;

/** An image sent as a file part of the form. */
export interface ReferenceFile {
  readonly bytes: Buffer;
  /** As the client declared it. */
  readonly mimetype: string;
}

export interface OpenAiCreation {
  /** The fields as sent: a JSON object, or the form's text fields (`input_reference[image_url]` as an object). */
  readonly fields: Readonly<Record<string, unknown>>;
  /** The form's `input_reference` file part. */
  readonly file?: ReferenceFile;
}

function invalid(param: string, message: string): ApiError {
  return new ApiError('invalid_parameter', message, { param });
}

/** Every size this service renders, `WIDTHxHEIGHT`, by quality then ratio. */
function sizes(): { size: string; quality: Quality; ratio: FixedAspectRatio }[] {
  return QUALITIES.flatMap((quality) =>
    ASPECT_RATIOS.filter((ratio): ratio is FixedAspectRatio => ratio !== 'adaptive').map((ratio) => {
      const frame = frameSize(quality, ratio);
      return { size: `${frame.width}x${frame.height}`, quality, ratio };
    }),
  );
}

export function parseSize(value: unknown): { quality: Quality; aspect_ratio: FixedAspectRatio } {
  const all = sizes();
  const found = typeof value === 'string' ? all.find((entry) => entry.size === value) : undefined;
  if (!found) {
    throw invalid(
      'size',
      `size ${JSON.stringify(value)} is not a frame this service renders; use one of ${all.map((entry) => entry.size).join(', ')}.`,
    );
  }
  return { quality: found.quality, aspect_ratio: found.ratio };
}

export function parseSeconds(value: unknown): number {
  const seconds =
    typeof value === 'string' && /^\d{1,3}$/.test(value)
      ? Number(value)
      : typeof value === 'number' && Number.isInteger(value)
        ? value
        : Number.NaN;
  if (!(seconds >= 1 && seconds <= LONGEST_DURATION)) {
    throw invalid(
      'seconds',
      `seconds must be a whole number of seconds, as a string (OpenAI's "4", "8" and "12"; the model's durations are in GET /v1/models).`,
    );
  }
  return seconds;
}

/** The model ID of the request: OpenAI's names mapped onto this catalogue, this catalogue's as given. */
function modelOf(value: unknown, withImage: boolean): unknown {
  if (value !== undefined && !(typeof value === 'string' && SORA.test(value))) return value;
  const fast = typeof value !== 'string' || !value.startsWith('sora-2-pro');
  const mode = withImage ? 'image' : 'text';
  const id = MODEL_IDS.find((candidate) => {
    const model = getModel(candidate);
    return model.mode === mode && model.fast === fast;
  });
  if (!id) {
    throw new ApiError(
      'model_not_found',
      `No ${fast ? 'fast ' : ''}${mode}-to-video model is served here for ${JSON.stringify(value ?? 'sora-2')}.`,
      { param: 'model' },
    );
  }
  return id;
}

/** `input_reference` as an image URL of the generation request (`fileUrl` makes an uploaded file's URL). */
function referenceUrl(creation: OpenAiCreation, fileUrl: (fileId: string) => string): string | undefined {
  const { file } = creation;
  const reference = creation.fields.input_reference;
  if (file) {
    if (reference !== undefined) throw invalid('input_reference', 'Send input_reference once.');
    // The type is read from the bytes when the task runs; a declared type that is none is left out.
    const type = /^[\w.+-]+\/[\w.+-]+$/.test(file.mimetype) ? file.mimetype : 'application/octet-stream';
    return `data:${type};base64,${file.bytes.toString('base64')}`;
  }
  if (reference === undefined) return undefined;
  if (typeof reference !== 'object' || reference === null || Array.isArray(reference)) {
    throw invalid(
      'input_reference',
      'input_reference must be a file, or an object with image_url or file_id.',
    );
  }
  const entries = Object.entries(reference);
  const [name, value] = entries[0] ?? [];
  if (entries.length !== 1 || (name !== 'image_url' && name !== 'file_id') || typeof value !== 'string') {
    throw invalid(
      'input_reference',
      'input_reference must have exactly one of image_url and file_id, a string.',
    );
  }
  return name === 'image_url' ? value : fileUrl(value);
}

/**
 * The generation request of an OpenAI creation, for the task use cases (which validate it and answer errors
 * naming this service's fields: `openAiParam` turns those into OpenAI's).
 */
export function generationBody(
  creation: OpenAiCreation,
  fileUrl: (fileId: string) => string,
): Record<string, unknown> {
  for (const name of Object.keys(creation.fields)) {
    if (!FIELDS.has(name))
      throw new ApiError('unknown_parameter', `Unknown parameter: ${name}.`, { param: name });
  }
  const { fields } = creation;
  const image = referenceUrl(creation, fileUrl);
  return {
    model: modelOf(fields.model, image !== undefined),
    ...(fields.prompt === undefined ? {} : { prompt: fields.prompt }),
    ...(image === undefined ? {} : { image_urls: [image] }),
    duration: parseSeconds(fields.seconds ?? String(OPENAI_DEFAULT_SECONDS)),
    ...parseSize(fields.size ?? OPENAI_DEFAULT_SIZE),
  };
}

/** A parameter of this service's request named as OpenAI's request names it. */
export function openAiParam(param: string | undefined): string | undefined {
  if (param === undefined) return undefined;
  if (param.startsWith('image_urls')) return 'input_reference';
  if (param === 'duration') return 'seconds';
  if (param === 'quality' || param === 'aspect_ratio') return 'size';
  return param;
}

/**
 * The generation request: its schema (the single definition behind validation, types and OpenAPI) and
 * the per-model rules of docs/decisions.md#models-and-requests that a schema cannot say.
 */
import { randomInt } from 'node:crypto';
import { type Static, Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { refuseControlCharacters } from './control-characters.js';
import { ApiError } from './errors.js';
import {
  ASPECT_RATIOS,
  type AspectRatio,
  QUALITIES,
  type Quality,
  resolveAspectRatio,
} from './frame-size.js';
import {
  type AssetField,
  findModel,
  MAX_REFERENCE_ASSETS,
  MODEL_IDS,
  type ModelDefinition,
  modelsAccepting,
} from './models.js';
import { schemaError } from './schema-errors.js';

export const PROMPT_MAX_LENGTH = 5000;
export const CALLBACK_URL_MAX_LENGTH = 2048;
export const SEED_MAX = 4294967295;
export const DEFAULT_DURATION = 5;
export const MIN_DURATION = 4;
export const MAX_DURATION = 15;
export const DEFAULT_QUALITY: Quality = '720p';

const AssetUrls = (description: string) => Type.Array(Type.String({ minLength: 1 }), { description });

export const GenerationRequestSchema = Type.Object(
  {
    model: Type.Union(
      MODEL_IDS.map((id) => Type.Literal(id)),
      { description: 'Selects the mode and the fast or standard variant.' },
    ),
    prompt: Type.String({
      minLength: 1,
      maxLength: PROMPT_MAX_LENGTH,
      description: 'Text description of the video; references are named in plain language ("image 1").',
    }),
    image_urls: Type.Optional(
      AssetUrls('Image-to-video: first (and last) frame. Reference-to-video: reference images.'),
    ),
    video_urls: Type.Optional(AssetUrls('Reference-to-video: reference videos.')),
    audio_urls: Type.Optional(AssetUrls('Reference-to-video: reference audio, used as the soundtrack.')),
    duration: Type.Optional(
      Type.Integer({ minimum: MIN_DURATION, maximum: MAX_DURATION, default: DEFAULT_DURATION }),
    ),
    quality: Type.Optional(
      Type.Union(
        QUALITIES.map((q) => Type.Literal(q)),
        { default: DEFAULT_QUALITY },
      ),
    ),
    aspect_ratio: Type.Optional(Type.Union(ASPECT_RATIOS.map((r) => Type.Literal(r)))),
    seed: Type.Optional(Type.Integer({ minimum: 0, maximum: SEED_MAX })),
    callback_url: Type.Optional(Type.String({ minLength: 1, maxLength: CALLBACK_URL_MAX_LENGTH })),
  },
  { additionalProperties: false },
);

export type GenerationRequestBody = Static<typeof GenerationRequestSchema>;

/** A request with every default applied: what a task stores and what an engine renders. */
export interface GenerationParams {
  readonly prompt: string;
  readonly image_urls: readonly string[];
  readonly video_urls: readonly string[];
  readonly audio_urls: readonly string[];
  readonly duration: number;
  readonly quality: Quality;
  readonly aspect_ratio: AspectRatio;
  readonly seed: number;
  readonly callback_url: string | null;
}

export interface ValidGeneration {
  readonly model: ModelDefinition;
  readonly params: GenerationParams;
}

const checker = TypeCompiler.Compile(GenerationRequestSchema);
const KNOWN_FIELDS = new Set(Object.keys(GenerationRequestSchema.properties));
const ASSET_FIELDS: readonly AssetField[] = ['image_urls', 'video_urls', 'audio_urls'];

/**
 * The one rule for every http(s) URL of a request (assets and callback_url): no `user:password@`. The URL is
 * stored with the task, written to logs and shown in callback logs, so credentials in it would leak there.
 */
function refuseCredentials(url: URL, param: string): void {
  if (url.username || url.password) {
    throw new ApiError(
      'invalid_parameter',
      `${param} must not contain credentials (user:password@); URLs end up in logs.`,
      { param },
    );
  }
}

function assertAssetUrl(value: string, param: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ApiError('invalid_parameter', `${param} is not a valid URL.`, { param });
  }
  if (url.protocol === 'http:' || url.protocol === 'https:') {
    refuseControlCharacters(value, param, '; percent-encode them');
    refuseCredentials(url, param);
    return;
  }
  if (url.protocol === 'data:' && /^data:[\w.+-]+\/[\w.+-]+(;[\w-]+=[\w.-]+)*;base64,/i.test(value)) return;
  throw new ApiError('invalid_parameter', `${param} must be an http(s) URL or a base64 data: URL.`, {
    param,
  });
}

function assertCallbackUrl(value: string): void {
  const param = 'callback_url';
  refuseControlCharacters(value, param, '; percent-encode them');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ApiError('invalid_parameter', 'callback_url is not a valid URL.', { param });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ApiError('invalid_parameter', 'callback_url must be an http or https URL.', { param });
  }
  refuseCredentials(url, param);
}

function checkAssets(model: ModelDefinition, body: GenerationRequestBody): void {
  let total = 0;
  for (const field of ASSET_FIELDS) {
    const urls = body[field];
    const limits = model.assets[field];
    if (!limits) {
      if (urls !== undefined) {
        throw new ApiError(
          'invalid_parameter',
          `${field} is not accepted by ${model.id}; it is accepted by ${modelsAccepting(field).join(', ')}.`,
          { param: field },
        );
      }
      continue;
    }
    const count = urls?.length ?? 0;
    if (count < limits.min) {
      throw new ApiError(
        urls === undefined ? 'missing_parameter' : 'invalid_parameter',
        `${field} needs at least ${limits.min} entr${limits.min === 1 ? 'y' : 'ies'} for ${model.id}.`,
        { param: field },
      );
    }
    if (count > limits.max) {
      throw new ApiError(
        'invalid_parameter',
        `${field} takes at most ${limits.max} entries for ${model.id}.`,
        {
          param: field,
        },
      );
    }
    for (const [index, url] of (urls ?? []).entries()) assertAssetUrl(url, `${field}[${index}]`);
    total += count;
  }
  if (model.mode === 'reference') {
    if ((body.image_urls?.length ?? 0) + (body.video_urls?.length ?? 0) === 0) {
      throw new ApiError(
        'missing_parameter',
        `${model.id} needs at least one image_urls or video_urls entry; audio cannot be the only reference.`,
        { param: 'image_urls' },
      );
    }
    if (total > MAX_REFERENCE_ASSETS) {
      throw new ApiError('invalid_parameter', `At most ${MAX_REFERENCE_ASSETS} reference assets in all.`, {
        param: 'image_urls',
      });
    }
  }
}

/**
 * Validates a parsed JSON body against docs/decisions.md#models-and-requests and applies the defaults.
 * Throws `ApiError` naming the first offending field.
 */
export function parseGenerationRequest(
  body: unknown,
  randomSeed: () => number = defaultSeed,
): ValidGeneration {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ApiError('invalid_json', 'The request body must be a JSON object.');
  }
  const record = body as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!KNOWN_FIELDS.has(key)) {
      throw new ApiError('unknown_parameter', `Unknown parameter: ${key}.`, { param: key });
    }
  }
  if (record.model === undefined)
    throw new ApiError('missing_parameter', 'model is required.', { param: 'model' });
  const model = typeof record.model === 'string' ? findModel(record.model) : undefined;
  if (!model) {
    throw new ApiError(
      'model_not_found',
      `The model ${JSON.stringify(record.model)} does not exist; use one of ${MODEL_IDS.join(', ')}.`,
      {
        param: 'model',
      },
    );
  }
  // The compiled check first: walking the errors of a valid body costs several times as much.
  if (!checker.Check(record)) throw schemaError(checker.Errors(record));
  const valid = record as GenerationRequestBody;

  const prompt = valid.prompt.trim();
  if (prompt.length === 0)
    throw new ApiError('invalid_parameter', 'prompt must not be blank.', { param: 'prompt' });
  // A NUL byte means nothing in a prompt, PostgreSQL cannot store it, and a command line cannot carry it.
  if (prompt.includes('\u0000'))
    throw new ApiError('invalid_parameter', 'prompt must not contain NUL (U+0000).', { param: 'prompt' });
  checkAssets(model, valid);
  if (valid.callback_url !== undefined) assertCallbackUrl(valid.callback_url);

  return {
    model,
    params: {
      prompt,
      image_urls: valid.image_urls ?? [],
      video_urls: valid.video_urls ?? [],
      audio_urls: valid.audio_urls ?? [],
      duration: valid.duration ?? DEFAULT_DURATION,
      quality: valid.quality ?? DEFAULT_QUALITY,
      // With no image or video to follow, `adaptive` is 16:9 from the start, and the task says so.
      aspect_ratio:
        model.mode === 'text'
          ? resolveAspectRatio(valid.aspect_ratio ?? '16:9', undefined)
          : (valid.aspect_ratio ?? 'adaptive'),
      seed: valid.seed ?? randomSeed(),
      callback_url: valid.callback_url ?? null,
    },
  };
}

function defaultSeed(): number {
  return randomInt(0, SEED_MAX + 1);
}

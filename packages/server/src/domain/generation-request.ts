/**
 * The generation request: its schema (the single definition behind validation, types and OpenAPI) and
 * the per-model rules of docs/decisions.md#models-and-requests that a schema cannot say.
 */
import { randomInt } from 'node:crypto';
import { type Static, Type } from '@sinclair/typebox';
import { type TypeCheck, TypeCompiler } from '@sinclair/typebox/compiler';
import { refuseControlCharacters } from './control-characters.js';
import { ApiError } from './errors.js';
import {
  ASPECT_RATIOS,
  type AspectRatio,
  QUALITIES,
  type Quality,
  resolveAspectRatio,
} from './frame-size.js';
import { ModelCatalogue } from './model-catalogue.js';
import { ASSET_FIELDS, DEFAULT_DURATION, DEFAULT_QUALITY, type ModelDefinition } from './models.js';
import { schemaError } from './schema-errors.js';

export const PROMPT_MAX_LENGTH = 5000;
export const CALLBACK_URL_MAX_LENGTH = 2048;
export const SEED_MAX = 4294967295;

const AssetUrls = (description: string) => Type.Array(Type.String({ minLength: 1 }), { description });

/**
 * The request's schema for a catalogue: its model names and the widest duration range of its models (each model's
 * own limits are checked after it, and `/v1/models` lists them). For the built-in catalogue, the interface's.
 */
function generationRequestSchema(catalogue: ModelCatalogue) {
  const durations = catalogue.models.flatMap((model) => model.durations);
  return Type.Object(
    {
      model: Type.Union(
        catalogue.names().map((name) => Type.Literal(name)),
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
        Type.Integer({
          minimum: Math.min(...durations),
          maximum: Math.max(...durations),
          default: DEFAULT_DURATION,
          description: "Seconds; each model's durations are in `GET /v1/models`.",
        }),
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
      return_last_frame: Type.Optional(
        Type.Boolean({
          default: false,
          description:
            "Also return the video's last frame, as a PNG of the video's size, in `results[1]` (to start the next shot from).",
        }),
      ),
      generate_audio: Type.Optional(
        Type.Boolean({
          default: true,
          description:
            "Whether the model makes a soundtrack of its own. Left out: true where the model's engines make sound " +
            '(`generate_audio` in `GET /v1/models`), false where they cannot; `true` for a model that cannot is ' +
            '`input_not_supported`. An audio reference is the soundtrack either way.',
        }),
      ),
      web_search: Type.Optional(
        Type.Boolean({
          default: false,
          description:
            'Text-to-video only: let the model search the web for what the prompt names (only engines that can, such as Seedance 2.x on Ark).',
        }),
      ),
    },
    { additionalProperties: false },
  );
}

type RequestSchema = ReturnType<typeof generationRequestSchema>;

export type GenerationRequestBody = Static<RequestSchema>;

interface CompiledRequest {
  readonly schema: RequestSchema;
  readonly checker: TypeCheck<RequestSchema>;
}

const compiled = new WeakMap<ModelCatalogue, CompiledRequest>();

function compiledFor(catalogue: ModelCatalogue): CompiledRequest {
  let found = compiled.get(catalogue);
  if (!found) {
    const schema = generationRequestSchema(catalogue);
    found = { schema, checker: TypeCompiler.Compile(schema) };
    compiled.set(catalogue, found);
  }
  return found;
}

/** The request's schema for `catalogue`, built once: it drives validation and the OpenAPI document. */
export function requestSchemaOf(catalogue: ModelCatalogue): RequestSchema {
  return compiledFor(catalogue).schema;
}

/** The request's schema for the built-in catalogue. */
export const GenerationRequestSchema = requestSchemaOf(ModelCatalogue.BUILT_IN);

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
  /** Whether `results[1]` is the video's last frame; absent (false) in tasks stored before the field. */
  readonly return_last_frame?: boolean;
  /** Text mode: whether the model may search the web; absent (false) in tasks stored before the field. */
  readonly web_search?: boolean;
  /** Whether the model makes a soundtrack of its own (an audio reference is the soundtrack either way). */
  readonly generate_audio: boolean;
}

export interface ValidGeneration {
  readonly model: ModelDefinition;
  readonly params: GenerationParams;
  /** Whether the request gave `generate_audio`; when it did not, a route that makes no sound makes it false. */
  readonly audioGiven: boolean;
}

const KNOWN_FIELDS = new Set(Object.keys(GenerationRequestSchema.properties));

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

/**
 * An id in the asset library of Ark (Seedance's trusted images, videos and audio, such as virtual portraits):
 * `asset://<id>`. Only an `ark` engine can take one; routed-inputs.ts refuses it for any other.
 */
const ASSET_ID_URL = /^asset:\/\/[A-Za-z0-9][\w.-]{0,255}$/;

export function isAssetIdUrl(url: string): boolean {
  return url.startsWith('asset://');
}

function assertAssetUrl(value: string, param: string): void {
  if (isAssetIdUrl(value)) {
    if (ASSET_ID_URL.test(value)) return;
    throw new ApiError(
      'invalid_parameter',
      `${param} is not an asset id: asset://<id>, the id of letters, digits, '_', '-' and '.'.`,
      { param },
    );
  }
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
  throw new ApiError(
    'invalid_parameter',
    `${param} must be an http(s) URL, a base64 data: URL or asset://<id>.`,
    {
      param,
    },
  );
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

function checkAssets(catalogue: ModelCatalogue, model: ModelDefinition, body: GenerationRequestBody): void {
  let total = 0;
  for (const field of ASSET_FIELDS) {
    const urls = body[field];
    const limits = model.assets[field];
    if (!limits) {
      if (urls !== undefined) {
        throw new ApiError(
          'invalid_parameter',
          `${field} is not accepted by ${model.id}; it is accepted by ${catalogue.accepting(field).join(', ')}.`,
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
    if (total > model.maxReferenceAssets) {
      throw new ApiError(
        'invalid_parameter',
        `At most ${model.maxReferenceAssets} reference assets in all.`,
        {
          param: 'image_urls',
        },
      );
    }
  }
}

/** The model's own durations, qualities and aspect ratios, where they are narrower than the schema's. */
function checkLimits(model: ModelDefinition, body: GenerationRequestBody): void {
  if (body.duration !== undefined && !model.durations.includes(body.duration)) {
    throw new ApiError(
      'invalid_parameter',
      `duration must be one of ${listOf(model.durations)} seconds for ${model.id}.`,
      { param: 'duration' },
    );
  }
  if (body.quality !== undefined && !model.qualities.includes(body.quality)) {
    throw new ApiError(
      'invalid_parameter',
      `quality must be one of ${model.qualities.join(', ')} for ${model.id}.`,
      {
        param: 'quality',
      },
    );
  }
  if (body.aspect_ratio !== undefined && !model.aspectRatios.includes(body.aspect_ratio)) {
    throw new ApiError(
      'invalid_parameter',
      `aspect_ratio must be one of ${model.aspectRatios.join(', ')} for ${model.id}.`,
      { param: 'aspect_ratio' },
    );
  }
}

/** `4, 6, 8`, or `4 to 15` for a run of consecutive values. */
function listOf(values: readonly number[]): string {
  const first = values[0] as number;
  const last = values[values.length - 1] as number;
  return values.length > 2 && last - first === values.length - 1 ? `${first} to ${last}` : values.join(', ');
}

/**
 * Validates a parsed JSON body against docs/decisions.md#models-and-requests and the model's own limits, and applies
 * the defaults. Throws `ApiError` naming the first offending field. `catalogue`: the server's (the built-in one
 * unless the engines file defines models).
 */
export function parseGenerationRequest(
  body: unknown,
  randomSeed: () => number = defaultSeed,
  catalogue: ModelCatalogue = ModelCatalogue.BUILT_IN,
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
  const model = catalogue.resolve(record.model);
  const { checker } = compiledFor(catalogue);
  // The compiled check first: walking the errors of a valid body costs several times as much.
  if (!checker.Check(record)) throw schemaError(checker.Errors(record));
  const valid = record as GenerationRequestBody;

  const prompt = parsePrompt(valid.prompt);
  checkLimits(model, valid);
  checkAssets(catalogue, model, valid);
  if (valid.callback_url !== undefined) assertCallbackUrl(valid.callback_url);
  if (valid.web_search === true && model.mode !== 'text') {
    throw new ApiError(
      'invalid_parameter',
      `web_search is for text-to-video; ${model.id} is a${model.mode === 'image' ? 'n image' : ' reference'}-to-video model.`,
      { param: 'web_search' },
    );
  }

  const aspectRatio = valid.aspect_ratio ?? model.defaultAspectRatio;
  return {
    model,
    params: {
      prompt,
      image_urls: valid.image_urls ?? [],
      video_urls: valid.video_urls ?? [],
      audio_urls: valid.audio_urls ?? [],
      duration: valid.duration ?? model.defaultDuration,
      quality: valid.quality ?? model.defaultQuality,
      // With no image or video to follow, `adaptive` is 16:9 from the start, and the task says so.
      aspect_ratio: model.mode === 'text' ? resolveAspectRatio(aspectRatio, undefined) : aspectRatio,
      seed: valid.seed ?? randomSeed(),
      callback_url: valid.callback_url ?? null,
      return_last_frame: valid.return_last_frame ?? false,
      web_search: valid.web_search ?? false,
      generate_audio: valid.generate_audio ?? true,
    },
    audioGiven: valid.generate_audio !== undefined,
  };
}

/** A prompt as a task stores it: trimmed, 1 to 5000 characters, without NUL; else an error naming `prompt`. */
export function parsePrompt(value: unknown): string {
  if (value === undefined)
    throw new ApiError('missing_parameter', 'prompt is required.', { param: 'prompt' });
  if (typeof value !== 'string' || value.length > PROMPT_MAX_LENGTH) {
    throw new ApiError(
      'invalid_parameter',
      `prompt must be a string of 1 to ${PROMPT_MAX_LENGTH} characters.`,
      { param: 'prompt' },
    );
  }
  const prompt = value.trim();
  if (prompt.length === 0)
    throw new ApiError('invalid_parameter', 'prompt must not be blank.', { param: 'prompt' });
  // A NUL byte means nothing in a prompt, PostgreSQL cannot store it, and a command line cannot carry it.
  if (prompt.includes('\u0000'))
    throw new ApiError('invalid_parameter', 'prompt must not contain NUL (U+0000).', { param: 'prompt' });
  return prompt;
}

function defaultSeed(): number {
  return randomInt(0, SEED_MAX + 1);
}

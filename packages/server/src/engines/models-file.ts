/**
 * The engines file's `models`: which engines render each model ID (its route), and the model IDs the operator
 * defines beside the six built-in ones, with their limits and aliases (docs/engines/README.md#models-of-your-own).
 *
 *   models:
 *     videogen-2.0-text-to-video:                 # a built-in ID: a route, and aliases if wanted
 *       route: ark
 *       aliases: [seedance-2.0-text-to-video]
 *     veo-3.1:                                    # a model of the operator's own
 *       route: veo
 *       mode: text
 *       durations: [4, 6, 8]
 *       qualities: [720p, 1080p]
 *       aspect_ratios: ["16:9", "9:16"]
 *
 * A route alone (`videogen-2.0-text-to-video: ark`) is the short form for a built-in ID. A model without a route
 * is in the catalogue (validation, `/v1/models`) but not served by this process's workers.
 */
import { type Static, Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { ASPECT_RATIOS, type AspectRatio, QUALITIES, type Quality } from '../domain/frame-size.js';
import { ModelCatalogue } from '../domain/model-catalogue.js';
import {
  ASSET_FIELDS,
  type AssetField,
  type AssetLimits,
  BUILT_IN_MODELS,
  DEFAULT_DURATION,
  DEFAULT_QUALITY,
  GENERATION_MODES,
  type GenerationMode,
  isBuiltInModelId,
  LONGEST_DURATION,
  MAX_IMAGE_MODE_IMAGES,
  MAX_REFERENCE_ASSETS,
  MODE_ASSETS,
  MODEL_ID_PATTERN,
  MODEL_IDS,
  type ModelDefinition,
} from '../domain/models.js';

const ENGINE_NAME = '^[a-z0-9][a-z0-9_-]{0,63}$';

const EngineName = Type.String({ pattern: ENGINE_NAME });

/** A weighted set of equivalent engines: `{balance: {gpu-a: 2, gpu-b: 1}}`. */
const BalancedStepSchema = Type.Object(
  {
    balance: Type.Record(Type.String({ pattern: ENGINE_NAME }), Type.Number({ exclusiveMinimum: 0 }), {
      additionalProperties: false,
      minProperties: 1,
    }),
  },
  { additionalProperties: false },
);

export const RouteSchema = Type.Union([
  EngineName,
  BalancedStepSchema,
  Type.Array(Type.Union([EngineName, BalancedStepSchema]), { minItems: 1 }),
]);

export type WrittenRoute = Static<typeof RouteSchema>;

const Count = Type.Integer({ minimum: 0, maximum: 100 });
const AssetLimitsSchema = Type.Object({ min: Count, max: Count }, { additionalProperties: false });
const Seconds = Type.Integer({ minimum: 1, maximum: LONGEST_DURATION });
const QualitySchema = Type.Union(QUALITIES.map((quality) => Type.Literal(quality)));
const AspectRatioSchema = Type.Union(ASPECT_RATIOS.map((ratio) => Type.Literal(ratio)));

/** The long form of a model entry. Only `route` and `aliases` are taken for a built-in ID. */
const ModelEntrySchema = Type.Object(
  {
    route: Type.Optional(RouteSchema),
    aliases: Type.Optional(Type.Array(Type.String({ pattern: MODEL_ID_PATTERN }), { uniqueItems: true })),
    mode: Type.Optional(Type.Union(GENERATION_MODES.map((mode) => Type.Literal(mode)))),
    fast: Type.Optional(Type.Boolean()),
    durations: Type.Optional(
      Type.Union([
        Type.Array(Seconds, { minItems: 1, uniqueItems: true }),
        Type.Object({ min: Seconds, max: Seconds }, { additionalProperties: false }),
      ]),
    ),
    default_duration: Type.Optional(Seconds),
    qualities: Type.Optional(Type.Array(QualitySchema, { minItems: 1, uniqueItems: true })),
    default_quality: Type.Optional(QualitySchema),
    aspect_ratios: Type.Optional(Type.Array(AspectRatioSchema, { minItems: 1, uniqueItems: true })),
    default_aspect_ratio: Type.Optional(AspectRatioSchema),
    image_urls: Type.Optional(AssetLimitsSchema),
    video_urls: Type.Optional(AssetLimitsSchema),
    audio_urls: Type.Optional(AssetLimitsSchema),
    max_references: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  },
  { additionalProperties: false },
);

type ModelEntry = Static<typeof ModelEntrySchema>;

export const ModelsSchema = Type.Record(
  Type.String({ pattern: MODEL_ID_PATTERN }),
  Type.Union([RouteSchema, ModelEntrySchema]),
);

const routeChecker = TypeCompiler.Compile(RouteSchema);
const modelEntryChecker = TypeCompiler.Compile(ModelEntrySchema);
const MODEL_ID = new RegExp(MODEL_ID_PATTERN);

/** The first problem of one `models` entry, said against the form it was meant as (a route or the long form). */
export function modelEntryProblem(id: string, entry: unknown): string | undefined {
  if (!MODEL_ID.test(id)) {
    return `/models/${id}: not a valid model ID (letters, digits, '.', '_' and '-', at most 100)`;
  }
  const longForm =
    entry !== null && typeof entry === 'object' && !Array.isArray(entry) && !('balance' in entry);
  const error = (longForm ? modelEntryChecker : routeChecker).Errors(entry).First();
  if (!error) return undefined;
  if (!longForm && !isBuiltInModelId(id)) {
    return `/models/${id}: not a built-in model ID (${MODEL_IDS.join(', ')}); define a model of your own with its mode`;
  }
  return `/models/${id}${error.path}: ${error.message}`;
}

/** A model's definition and whether it is routed here. */
export interface ModelsFile {
  readonly catalogue: ModelCatalogue;
  /** Model ID → its route as written, for the model IDs this process's workers serve. */
  readonly routes: ReadonlyMap<string, WrittenRoute>;
}

/** Keys of the long form that a built-in ID does not take: its limits are the interface's. */
const DEFINITION_KEYS = Object.keys(ModelEntrySchema.properties).filter(
  (key) => key !== 'route' && key !== 'aliases',
);

function isLongForm(entry: WrittenRoute | ModelEntry): entry is ModelEntry {
  return typeof entry === 'object' && !Array.isArray(entry) && !('balance' in entry);
}

function durationsOf(written: ModelEntry['durations']): number[] | undefined {
  if (written === undefined) return undefined;
  if (Array.isArray(written)) return [...written].sort((a, b) => a - b);
  return Array.from({ length: Math.max(0, written.max - written.min + 1) }, (_, i) => written.min + i);
}

function assetsOf(
  mode: GenerationMode,
  entry: ModelEntry,
  problem: (path: string, message: string) => Error,
): Partial<Record<AssetField, AssetLimits>> {
  const written = ASSET_FIELDS.filter((field) => entry[field] !== undefined);
  for (const field of written) {
    const limits = entry[field] as AssetLimits;
    if (limits.min > limits.max) throw problem(`/${field}/min`, 'must not be more than max');
  }
  if (mode === 'text') {
    const field = written[0];
    if (field) throw problem(`/${field}`, 'a text model takes no assets');
    return {};
  }
  if (mode === 'image') {
    const field = written.find((name) => name !== 'image_urls');
    if (field) throw problem(`/${field}`, 'an image model takes image_urls only');
    const images = entry.image_urls;
    if (!images) return MODE_ASSETS.image;
    if (images.min < 1) throw problem('/image_urls/min', 'an image model needs at least 1 image');
    if (images.max > MAX_IMAGE_MODE_IMAGES) {
      throw problem(
        '/image_urls/max',
        `an image model takes at most ${MAX_IMAGE_MODE_IMAGES} (first and last frame)`,
      );
    }
    return { image_urls: images };
  }
  if (written.length === 0) return MODE_ASSETS.reference;
  const assets = Object.fromEntries(
    written.filter((field) => (entry[field] as AssetLimits).max > 0).map((field) => [field, entry[field]]),
  ) as Partial<Record<AssetField, AssetLimits>>;
  if (!assets.image_urls && !assets.video_urls) {
    throw problem(
      '',
      'a reference model takes image_urls or video_urls (audio cannot be the only reference)',
    );
  }
  return assets;
}

function defined<T>(
  value: T | undefined,
  allowed: readonly T[],
  path: string,
  problem: (p: string, m: string) => Error,
): T | undefined {
  if (value !== undefined && !allowed.includes(value))
    throw problem(path, `must be one of ${allowed.join(', ')}`);
  return value;
}

/** A model of the operator's own, from its long form; `problem` makes an error at a path inside the entry. */
function defineModel(
  id: string,
  entry: ModelEntry,
  problem: (path: string, message: string) => Error,
): ModelDefinition {
  const mode = entry.mode;
  if (mode === undefined) {
    throw problem(
      '',
      `not a built-in model ID (${MODEL_IDS.join(', ')}); a model of your own needs its mode (text, image or reference)`,
    );
  }
  const assets = assetsOf(mode, entry, problem);
  const durations = durationsOf(entry.durations) ?? BUILT_IN_MODELS[0]?.durations ?? [DEFAULT_DURATION];
  if (durations.length === 0) throw problem('/durations/min', 'must not be more than max');
  const qualities: readonly Quality[] = entry.qualities ?? QUALITIES;
  const aspectRatios: readonly AspectRatio[] = entry.aspect_ratios ?? ASPECT_RATIOS;
  const fixed = aspectRatios.filter((ratio) => ratio !== 'adaptive');
  if (mode === 'text' && fixed.length === 0)
    throw problem('/aspect_ratios', 'a text model needs a fixed ratio');
  const total = Object.values(assets).reduce((sum, limits) => sum + limits.max, 0);
  return {
    id,
    mode,
    fast: entry.fast ?? false,
    assets,
    maxReferenceAssets:
      entry.max_references ??
      (ASSET_FIELDS.some((field) => entry[field] !== undefined) ? total : MAX_REFERENCE_ASSETS),
    durations,
    defaultDuration:
      defined(entry.default_duration, durations, '/default_duration', problem) ??
      (durations.includes(DEFAULT_DURATION) ? DEFAULT_DURATION : (durations[0] as number)),
    qualities,
    defaultQuality:
      defined(entry.default_quality, qualities, '/default_quality', problem) ??
      (qualities.includes(DEFAULT_QUALITY) ? DEFAULT_QUALITY : (qualities[0] as Quality)),
    aspectRatios,
    defaultAspectRatio:
      defined(entry.default_aspect_ratio, aspectRatios, '/default_aspect_ratio', problem) ??
      (mode === 'text'
        ? fixed.includes('16:9')
          ? '16:9'
          : (fixed[0] as AspectRatio)
        : aspectRatios.includes('adaptive')
          ? 'adaptive'
          : (aspectRatios[0] as AspectRatio)),
    aliases: entry.aliases ?? [],
  };
}

/**
 * The catalogue and the routes of a `models` section that has passed `ModelsSchema`. `problem` makes the file's
 * error for a path under `/models`.
 */
export function readModels(
  written: Static<typeof ModelsSchema>,
  problem: (path: string, message: string) => Error,
): ModelsFile {
  const routes = new Map<string, WrittenRoute>();
  const builtIns = new Map(BUILT_IN_MODELS.map((model) => [model.id, model]));
  const own: ModelDefinition[] = [];
  for (const [id, entry] of Object.entries(written)) {
    const at = (path: string, message: string) => problem(`/models/${id}${path}`, message);
    const long = isLongForm(entry) ? entry : { route: entry };
    if (long.route !== undefined) routes.set(id, long.route);
    const builtIn = builtIns.get(id);
    if (isBuiltInModelId(id) && builtIn) {
      const key = DEFINITION_KEYS.find((name) => long[name as keyof ModelEntry] !== undefined);
      if (key) {
        throw at(
          `/${key}`,
          "a built-in model's limits are the interface's; define a model ID of your own for others",
        );
      }
      builtIns.set(id, { ...builtIn, aliases: long.aliases ?? [] });
    } else {
      own.push(defineModel(id, long, at));
    }
  }
  const models = [...builtIns.values(), ...own];
  const named = new Map<string, string>();
  for (const model of models) {
    for (const name of [model.id, ...model.aliases]) {
      const other = named.get(name);
      if (other !== undefined) {
        throw problem(
          `/models/${model.id}${name === model.id ? '' : '/aliases'}`,
          `"${name}" already names ${other}`,
        );
      }
      named.set(name, model.id);
    }
  }
  return { catalogue: new ModelCatalogue(models), routes };
}

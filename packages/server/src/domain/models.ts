/**
 * A model's definition: its mode, fast or not, and its limits. The six built-in model IDs (three modes, each with a
 * fast variant) are the interface's; an operator's engines file may define more (model-catalogue.ts).
 */
import { ASPECT_RATIOS, type AspectRatio, QUALITIES, type Quality } from './frame-size.js';

export type GenerationMode = 'text' | 'image' | 'reference';

export const GENERATION_MODES: readonly GenerationMode[] = ['text', 'image', 'reference'];

/** The built-in model IDs, in catalogue order. */
export const MODEL_IDS = [
  'videogen-2.0-text-to-video',
  'videogen-2.0-image-to-video',
  'videogen-2.0-reference-to-video',
  'videogen-2.0-fast-text-to-video',
  'videogen-2.0-fast-image-to-video',
  'videogen-2.0-fast-reference-to-video',
] as const;

export type BuiltInModelId = (typeof MODEL_IDS)[number];

/** A model ID of the catalogue the server has: a built-in one or one the operator defined. */
export type ModelId = string;

/** What a model ID may look like: safe in a URL path, a metric label and a file name. */
export const MODEL_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$';

export type AssetField = 'image_urls' | 'video_urls' | 'audio_urls';

export const ASSET_FIELDS: readonly AssetField[] = ['image_urls', 'video_urls', 'audio_urls'];

export interface AssetLimits {
  readonly min: number;
  readonly max: number;
}

export interface ModelDefinition {
  readonly id: ModelId;
  readonly mode: GenerationMode;
  readonly fast: boolean;
  /** Fields absent here are not accepted by the model. */
  readonly assets: Partial<Record<AssetField, AssetLimits>>;
  /** Reference mode: the most assets over all three fields. */
  readonly maxReferenceAssets: number;
  /** Seconds it renders, ascending. */
  readonly durations: readonly number[];
  readonly defaultDuration: number;
  readonly qualities: readonly Quality[];
  readonly defaultQuality: Quality;
  /** `adaptive` among them where the model follows its first image or video. */
  readonly aspectRatios: readonly AspectRatio[];
  /** Text mode: a fixed ratio (there is nothing to follow); the others: `adaptive` where the model has it. */
  readonly defaultAspectRatio: AspectRatio;
  /** Other names a request may use for it; the task names the model by its ID. */
  readonly aliases: readonly string[];
}

/** Each mode's asset fields, with how many of each, as the built-in models take them. */
export const MODE_ASSETS: Readonly<Record<GenerationMode, Partial<Record<AssetField, AssetLimits>>>> = {
  text: {},
  image: { image_urls: { min: 1, max: 2 } },
  reference: {
    image_urls: { min: 0, max: 9 },
    video_urls: { min: 0, max: 3 },
    audio_urls: { min: 0, max: 3 },
  },
};

/** Reference mode takes at most this many assets over all three fields (the built-in models). */
export const MAX_REFERENCE_ASSETS = 12;

/** Image mode's first and last frame: no model takes more images in that mode. */
export const MAX_IMAGE_MODE_IMAGES = 2;

export const MIN_DURATION = 4;
export const MAX_DURATION = 15;
export const DEFAULT_DURATION = 5;
export const DEFAULT_QUALITY: Quality = '720p';

/** The longest video any model may be defined to make, in seconds. */
export const LONGEST_DURATION = 120;

const BUILT_IN_DURATIONS = Array.from(
  { length: MAX_DURATION - MIN_DURATION + 1 },
  (_, i) => MIN_DURATION + i,
);

function builtIn(id: BuiltInModelId): ModelDefinition {
  const mode: GenerationMode = id.endsWith('text-to-video')
    ? 'text'
    : id.endsWith('image-to-video')
      ? 'image'
      : 'reference';
  return {
    id,
    mode,
    fast: id.includes('-fast-'),
    assets: MODE_ASSETS[mode],
    maxReferenceAssets: MAX_REFERENCE_ASSETS,
    durations: BUILT_IN_DURATIONS,
    defaultDuration: DEFAULT_DURATION,
    qualities: QUALITIES,
    defaultQuality: DEFAULT_QUALITY,
    aspectRatios: ASPECT_RATIOS,
    defaultAspectRatio: mode === 'text' ? '16:9' : 'adaptive',
    aliases: [],
  };
}

export const BUILT_IN_MODELS: readonly ModelDefinition[] = MODEL_IDS.map(builtIn);

export function isBuiltInModelId(id: string): id is BuiltInModelId {
  return (MODEL_IDS as readonly string[]).includes(id);
}

const BUILT_IN_BY_ID = new Map(BUILT_IN_MODELS.map((model) => [model.id, model]));

/** A built-in model's definition (the server's catalogue, with operator models and aliases, is `ModelCatalogue`). */
export function getModel(id: BuiltInModelId): ModelDefinition {
  return BUILT_IN_BY_ID.get(id) as ModelDefinition;
}

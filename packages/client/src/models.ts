/**
 * The model catalogue and the generation request, per model: the six built-in model IDs over three modes, each
 * with a fast variant, and the request each mode accepts; and the models a server's operator defined, whose
 * limits the server says (`listModels()`) and checks. The types carry the per-model rules a compiler can check
 * (which asset fields a mode takes, image-to-video's one or two images, reference-to-video's "at least one
 * image or video"); the server checks the rest (counts, URL forms, prompt length) and answers a 400 naming
 * the field.
 */

export const TEXT_TO_VIDEO_MODELS = [
  'videogen-2.0-text-to-video',
  'videogen-2.0-fast-text-to-video',
] as const;
export const IMAGE_TO_VIDEO_MODELS = [
  'videogen-2.0-image-to-video',
  'videogen-2.0-fast-image-to-video',
] as const;
export const REFERENCE_TO_VIDEO_MODELS = [
  'videogen-2.0-reference-to-video',
  'videogen-2.0-fast-reference-to-video',
] as const;

export const MODEL_IDS = [
  'videogen-2.0-text-to-video',
  'videogen-2.0-image-to-video',
  'videogen-2.0-reference-to-video',
  'videogen-2.0-fast-text-to-video',
  'videogen-2.0-fast-image-to-video',
  'videogen-2.0-fast-reference-to-video',
] as const;

export type TextToVideoModel = (typeof TEXT_TO_VIDEO_MODELS)[number];
export type ImageToVideoModel = (typeof IMAGE_TO_VIDEO_MODELS)[number];
export type ReferenceToVideoModel = (typeof REFERENCE_TO_VIDEO_MODELS)[number];
/** One of the six model IDs every server has. */
export type BuiltInModelId = (typeof MODEL_IDS)[number];
/**
 * A model ID or alias the server knows: a built-in one, or one its operator defined (`listModels()` lists them).
 * A string, so that IDs this SDK never heard of work; the built-in ones keep their per-mode request types.
 */
export type ModelId = BuiltInModelId | (string & {});

export type GenerationMode = 'text' | 'image' | 'reference';

export const DURATIONS = [4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] as const;
/** Seconds of a built-in model; 5 when not given. */
export type Duration = (typeof DURATIONS)[number];

export const QUALITIES = ['480p', '720p', '1080p'] as const;
/** The short side of the frame in pixels; `720p` when not given. */
export type Quality = (typeof QUALITIES)[number];

export const ASPECT_RATIOS = ['16:9', '9:16', '1:1', '4:3', '3:4', '21:9', 'adaptive'] as const;
/** `16:9` by default for text models, `adaptive` (follows the first image or video) for the others. */
export type AspectRatio = (typeof ASPECT_RATIOS)[number];

export const MAX_SEED = 4294967295;
export const MAX_PROMPT_LENGTH = 5000;
/** Reference models take at most this many assets over `image_urls`, `video_urls` and `audio_urls`. */
export const MAX_REFERENCE_ASSETS = 12;

export type AssetField = 'image_urls' | 'video_urls' | 'audio_urls';

/**
 * How many URLs of each asset field a mode takes, as the catalogue has it (a field absent is not accepted).
 * A server may take fewer for a model its engines cannot feed: `listModels()` says what it takes.
 */
export const ASSET_LIMITS = {
  text: {},
  image: { image_urls: { min: 1, max: 2 } },
  reference: {
    image_urls: { min: 0, max: 9 },
    video_urls: { min: 0, max: 3 },
    audio_urls: { min: 0, max: 3 },
  },
} as const satisfies Record<GenerationMode, Partial<Record<AssetField, { min: number; max: number }>>>;

/**
 * An `http(s)` URL, a base64 `data:` URL, the `url` of an uploaded file, or `asset://<id>` (Ark's asset library,
 * for a model routed to Ark only).
 */
export type AssetUrl = string;

type NonEmpty<T> = readonly [T, ...T[]];

/** What every mode accepts. */
export interface GenerationOptions {
  /** 1 to 5000 characters; name references in plain language ("image 1", "video 2", "audio 1"). */
  readonly prompt: string;
  readonly duration?: Duration;
  readonly quality?: Quality;
  readonly aspect_ratio?: AspectRatio;
  /** 0 to 4294967295; the same request with the same seed gives the same video. Random when not given. */
  readonly seed?: number;
  /** An `http(s)` URL without credentials (at most 2048 characters), POSTed the task at every status change. */
  readonly callback_url?: string;
  /** Also return the video's last frame, a PNG of its size, in `results[1]`. Default false. */
  readonly return_last_frame?: boolean;
  /**
   * Whether the model makes a soundtrack of its own. Left out: true where the model's engines make sound
   * (`Model.generate_audio`), false where they cannot; `true` for a model that cannot is refused
   * (`input_not_supported`). An audio reference is the soundtrack either way.
   */
  readonly generate_audio?: boolean;
}

export interface TextToVideoRequest extends GenerationOptions {
  readonly model: TextToVideoModel;
  /** Let the model search the web for what the prompt names, where its engine can (Seedance 2.x on Ark). */
  readonly web_search?: boolean;
  readonly image_urls?: never;
  readonly video_urls?: never;
  readonly audio_urls?: never;
}

export interface ImageToVideoRequest extends GenerationOptions {
  readonly model: ImageToVideoModel;
  /** One image (the first frame) or two (the first and the last frame). */
  readonly image_urls: readonly [first: AssetUrl] | readonly [first: AssetUrl, last: AssetUrl];
  readonly video_urls?: never;
  readonly audio_urls?: never;
}

interface ReferenceAssets {
  /** At most 9. */
  readonly image_urls?: readonly AssetUrl[];
  /** At most 3. */
  readonly video_urls?: readonly AssetUrl[];
  /** At most 3; the first is the soundtrack. */
  readonly audio_urls?: readonly AssetUrl[];
}

/** At least one image or video (audio cannot be the only reference); at most 12 assets in all. */
export type ReferenceToVideoRequest = GenerationOptions & { readonly model: ReferenceToVideoModel } & (
    | (ReferenceAssets & { readonly image_urls: NonEmpty<AssetUrl> })
    | (ReferenceAssets & { readonly video_urls: NonEmpty<AssetUrl> })
  );

/** A request for a built-in model, discriminated by `model`. */
export type BuiltInGenerationRequest = TextToVideoRequest | ImageToVideoRequest | ReferenceToVideoRequest;

/**
 * A request for a model the server's operator defined (not a built-in ID): its mode, durations and asset counts
 * are the server's (`getModel(id)`), which refuses what the model does not take.
 */
export interface OperatorModelRequest<M extends string = string> extends Omit<GenerationOptions, 'duration'> {
  readonly model: M;
  /** Seconds, among the model's `durations`. */
  readonly duration?: number;
  readonly image_urls?: readonly AssetUrl[];
  readonly video_urls?: readonly AssetUrl[];
  readonly audio_urls?: readonly AssetUrl[];
  /** A text-to-video model's: let it search the web, where its engine can (Seedance 2.x on Ark). */
  readonly web_search?: boolean;
}

/**
 * The body of `POST /v1/videos/generations`: for a built-in model, its mode's request; for another model ID `M`,
 * an `OperatorModelRequest` (a built-in ID never matches it, so its mode's rules still hold at compile time).
 * Without `M`, a built-in model's request; `createTask` and `generate` infer `M` from the request's `model`.
 */
export type GenerationRequest<M extends string = never> =
  | BuiltInGenerationRequest
  | OperatorModelRequest<Exclude<M, BuiltInModelId>>;

/** The request type a given model accepts. */
export type GenerationRequestFor<M extends ModelId> = M extends BuiltInModelId
  ? RequestOfModel<BuiltInGenerationRequest, M>
  : OperatorModelRequest<M>;
type RequestOfModel<R, M> = R extends { readonly model: infer Accepted }
  ? M extends Accepted
    ? R
    : never
  : never;

/** The mode a model ID belongs to (any mode for a model the operator defined). */
export type ModeOf<M extends ModelId> = M extends TextToVideoModel
  ? 'text'
  : M extends ImageToVideoModel
    ? 'image'
    : M extends ReferenceToVideoModel
      ? 'reference'
      : GenerationMode;

export function isBuiltInModelId(value: unknown): value is BuiltInModelId {
  return (MODEL_IDS as readonly unknown[]).includes(value);
}

export function isTextToVideoModel(model: string): model is TextToVideoModel {
  return (TEXT_TO_VIDEO_MODELS as readonly string[]).includes(model);
}

export function isImageToVideoModel(model: string): model is ImageToVideoModel {
  return (IMAGE_TO_VIDEO_MODELS as readonly string[]).includes(model);
}

export function isReferenceToVideoModel(model: string): model is ReferenceToVideoModel {
  return (REFERENCE_TO_VIDEO_MODELS as readonly string[]).includes(model);
}

export function isDuration(value: unknown): value is Duration {
  return (DURATIONS as readonly unknown[]).includes(value);
}

export function isQuality(value: unknown): value is Quality {
  return (QUALITIES as readonly unknown[]).includes(value);
}

export function isAspectRatio(value: unknown): value is AspectRatio {
  return (ASPECT_RATIOS as readonly unknown[]).includes(value);
}

/** The mode of a built-in model ID (another model's is in `getModel(id)`). */
export function modeOf<M extends BuiltInModelId>(model: M): ModeOf<M> {
  const mode = model.endsWith('text-to-video')
    ? 'text'
    : model.endsWith('image-to-video')
      ? 'image'
      : 'reference';
  return mode as ModeOf<M>;
}

const MODEL_OF_MODE = {
  text: TEXT_TO_VIDEO_MODELS,
  image: IMAGE_TO_VIDEO_MODELS,
  reference: REFERENCE_TO_VIDEO_MODELS,
} as const satisfies Record<GenerationMode, readonly [standard: BuiltInModelId, fast: BuiltInModelId]>;

/** The built-in model ID of a mode, standard or fast (`videogen-2.0-fast-…`). */
export function modelFor(mode: GenerationMode, options: { readonly fast?: boolean } = {}): BuiltInModelId {
  const [standard, fast] = MODEL_OF_MODE[mode];
  return options.fast ? fast : standard;
}

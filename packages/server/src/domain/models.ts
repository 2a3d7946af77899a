/** The model catalogue: six model IDs over three modes, each with a fast variant. */

export type GenerationMode = 'text' | 'image' | 'reference';

export const MODEL_IDS = [
  'videogen-2.0-text-to-video',
  'videogen-2.0-image-to-video',
  'videogen-2.0-reference-to-video',
  'videogen-2.0-fast-text-to-video',
  'videogen-2.0-fast-image-to-video',
  'videogen-2.0-fast-reference-to-video',
] as const;

export type ModelId = (typeof MODEL_IDS)[number];

export type AssetField = 'image_urls' | 'video_urls' | 'audio_urls';

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
}

const MODE_ASSETS: Record<GenerationMode, Partial<Record<AssetField, AssetLimits>>> = {
  text: {},
  image: { image_urls: { min: 1, max: 2 } },
  reference: {
    image_urls: { min: 0, max: 9 },
    video_urls: { min: 0, max: 3 },
    audio_urls: { min: 0, max: 3 },
  },
};

/** Reference mode takes at most this many assets over all three fields. */
export const MAX_REFERENCE_ASSETS = 12;

function define(id: ModelId): ModelDefinition {
  const fast = id.includes('-fast-');
  const mode: GenerationMode = id.endsWith('text-to-video')
    ? 'text'
    : id.endsWith('image-to-video')
      ? 'image'
      : 'reference';
  return { id, mode, fast, assets: MODE_ASSETS[mode] };
}

export const MODELS: ReadonlyMap<ModelId, ModelDefinition> = new Map(MODEL_IDS.map((id) => [id, define(id)]));

export function findModel(id: string): ModelDefinition | undefined {
  return MODELS.get(id as ModelId);
}

export function getModel(id: ModelId): ModelDefinition {
  const model = MODELS.get(id);
  if (!model) throw new Error(`unknown model ${id}`);
  return model;
}

/** Model IDs (standard first) whose mode accepts `field`, for error messages. */
export function modelsAccepting(field: AssetField): ModelId[] {
  return MODEL_IDS.filter((id) => getModel(id).assets[field] !== undefined);
}

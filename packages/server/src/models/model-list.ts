/**
 * `GET /v1/models`: the catalogue as this gateway serves it. Each model ID with its mode, the inputs its
 * engines take (the catalogue's limits, narrowed by every engine of its route: any of them may render a task),
 * the durations, qualities and aspect ratios (every engine's result is conformed to these), and whether it can
 * run now: some engine of its route with a circuit that is not open, and some live worker serving it.
 */

import { ANY_INPUT, type EngineCapabilities } from '../domain/engine-capabilities.js';
import { type CircuitPolicy, circuitState, type EngineRoute, routeEngines } from '../domain/engine-route.js';
import { ApiError } from '../domain/errors.js';
import type { AspectRatio, Quality } from '../domain/frame-size.js';
import type { ModelCatalogue } from '../domain/model-catalogue.js';
import type { AssetField, AssetLimits, GenerationMode, ModelDefinition, ModelId } from '../domain/models.js';
import type { EngineStats, RoutingStore, WorkerStore } from '../ports/store.js';

/**
 * When the catalogue of videogen 2.0 was published (docs/decisions.md#model-list): the `created` of every
 * model.
 */
const CATALOGUE_CREATED = 1_767_225_600;

export interface PublicModel {
  id: ModelId;
  object: 'model';
  created: number;
  owned_by: 'videogen';
  mode: GenerationMode;
  fast: boolean;
  /** The asset fields the model takes, with how many of each. */
  inputs: Partial<Record<AssetField, AssetLimits>>;
  /** Other names a request may give it (the engines file's `aliases`). */
  aliases: string[];
  /** Seconds. */
  durations: number[];
  qualities: Quality[];
  aspect_ratios: AspectRatio[];
  /** Whether its engines make sound (`generate_audio`). */
  generate_audio: boolean;
  /** Whether a request may ask it to search the web (`web_search`): a text model whose engines all can. */
  web_search: boolean;
  /** Whether its inputs may be `asset://` ids of the provider's asset library: every engine of its route takes them. */
  asset_ids: boolean;
  /** Whether a task created now would be rendered. */
  available: boolean;
  /** Why not, when not available. */
  unavailable_reason?: string;
}

export interface PublicModelList {
  object: 'list';
  data: PublicModel[];
}

function inputsOf(
  model: ModelDefinition,
  capabilities: EngineCapabilities,
): Partial<Record<AssetField, AssetLimits>> {
  const inputs: Partial<Record<AssetField, AssetLimits>> = {};
  const most: Record<AssetField, number> =
    model.mode === 'image'
      ? {
          image_urls: capabilities.firstFrame ? (capabilities.lastFrame ? 2 : 1) : 0,
          video_urls: 0,
          audio_urls: 0,
        }
      : {
          image_urls: capabilities.referenceImages,
          video_urls: capabilities.referenceVideos,
          audio_urls: capabilities.referenceAudios,
        };
  for (const [field, limits] of Object.entries(model.assets) as [AssetField, AssetLimits][]) {
    const max = Math.min(limits.max, most[field]);
    if (max > 0) inputs[field] = { min: limits.min, max };
  }
  return inputs;
}

/** What the model list knows of this process's engines file. */
export interface ModelRouting {
  /** Each model ID's route; a model ID absent here is routed by another process's file. */
  readonly routes: ReadonlyMap<ModelId, EngineRoute>;
  readonly circuit: CircuitPolicy;
  /** What every engine of the route can take. */
  capabilities(route: EngineRoute): EngineCapabilities;
}

/** What the model list reads: the engines' state and the models workers serve. */
type ModelStore = Pick<RoutingStore, 'engineStats'> & Pick<WorkerStore, 'servedModels'>;

export class ModelList {
  readonly #catalogue: ModelCatalogue;
  readonly #routing: ModelRouting;
  readonly #store: ModelStore;

  constructor(options: { catalogue: ModelCatalogue; routing: ModelRouting; store: ModelStore }) {
    this.#catalogue = options.catalogue;
    this.#routing = options.routing;
    this.#store = options.store;
  }

  async list(): Promise<PublicModelList> {
    const [stats, served] = await Promise.all([this.#store.engineStats(), this.#store.servedModels()]);
    const data = this.#catalogue.models.map((model) => this.#describe(model, stats, served));
    return { object: 'list', data };
  }

  /** By its ID or an alias. */
  async get(name: string): Promise<PublicModel> {
    const id = this.#catalogue.find(name)?.id;
    const model = (await this.list()).data.find((candidate) => candidate.id === id);
    if (!model)
      throw new ApiError('model_not_found', `The model ${JSON.stringify(name)} does not exist.`, {
        param: 'model',
      });
    return model;
  }

  #describe(model: ModelDefinition, stats: EngineStats, served: ReadonlySet<ModelId>): PublicModel {
    const id = model.id;
    const route = this.#routing.routes.get(id);
    const base = {
      id,
      object: 'model' as const,
      created: CATALOGUE_CREATED,
      owned_by: 'videogen' as const,
      mode: model.mode,
      fast: model.fast,
      aliases: [...model.aliases],
      durations: [...model.durations],
      qualities: [...model.qualities],
      aspect_ratios: [...model.aspectRatios],
    };
    // An API process with no engines file for this model (another file on the workers) knows no limits.
    const capabilities = route ? this.#routing.capabilities(route) : ANY_INPUT;
    const inputs = inputsOf(model, capabilities);
    const reason = !served.has(id)
      ? 'No worker serving this model is running.'
      : route &&
          routeEngines(route).every(
            (engine) => circuitState(stats.circuits.get(engine), this.#routing.circuit, stats.now) === 'open',
          )
        ? 'Every engine of this model is unavailable (circuit open); tasks wait until one recovers.'
        : undefined;
    return {
      ...base,
      inputs,
      generate_audio: capabilities.audio,
      web_search: model.mode === 'text' && capabilities.webSearch === true,
      asset_ids: capabilities.assetIds === true,
      available: reason === undefined,
      ...(reason && { unavailable_reason: reason }),
    };
  }
}

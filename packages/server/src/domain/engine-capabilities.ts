/**
 * What inputs an engine can hand its model, so that a request the routed engine cannot honour is refused at
 * creation (`input_not_supported`) rather than silently degraded. Decided from an engine's options alone (no
 * server is asked), so API processes that build no engines can check too. Engines that say nothing take
 * everything the interface allows.
 */
import { type GenerationParams, isAssetIdUrl } from './generation-request.js';
import type { ModelDefinition } from './models.js';

export interface EngineCapabilities {
  /** Image mode's one image. */
  readonly firstFrame: boolean;
  /** Image mode's second image. */
  readonly lastFrame: boolean;
  /** Reference mode: the most images, videos and audio files it takes. */
  readonly referenceImages: number;
  readonly referenceVideos: number;
  readonly referenceAudios: number;
  /** Text mode's `web_search`: the model may search the web (Seedance 2.x on Ark). Absent: it cannot. */
  readonly webSearch?: boolean;
  /** `asset://<id>` URLs, ids in Ark's asset library, passed on as they are. Absent: it cannot take them. */
  readonly assetIds?: boolean;
  /**
   * Whether it makes a soundtrack of its own when asked (`generate_audio`): its model makes sound and the
   * engine can ask for it. One that cannot refuses `generate_audio: true`, and a request that leaves the field
   * out gets false.
   */
  readonly audio: boolean;
}

/**
 * Every input of the interface, in any number; not web search nor `asset://` ids, which only an engine that
 * says so takes.
 */
export const ANY_INPUT: EngineCapabilities = {
  firstFrame: true,
  lastFrame: true,
  referenceImages: Number.POSITIVE_INFINITY,
  referenceVideos: Number.POSITIVE_INFINITY,
  referenceAudios: Number.POSITIVE_INFINITY,
  audio: true,
};

/**
 * The highest `prefix_N` (1 to `count`) among the placeholders an engine's command or template uses (`image_3`:
 * 3), 0 when it uses none: how many numbered inputs of that kind it takes.
 */
export function highestNumbered(used: ReadonlySet<string>, prefix: string, count: number): number {
  let highest = 0;
  for (let n = 1; n <= count; n++) if (used.has(`${prefix}_${n}`)) highest = n;
  return highest;
}

/** What the engines a request's model is routed to can take. */
export interface InputCheck {
  /** The first input of the request that some engine of the route cannot take, if any. */
  unsupported(model: ModelDefinition, params: GenerationParams): UnsupportedInput | undefined;
  /**
   * Whether every engine of the route makes sound (`generate_audio`): what a request that leaves the field out
   * gets. True for a model this process does not route (the engines file of the workers that do decides).
   */
  makesSound(model: ModelDefinition): boolean;
}

/** The check of a process that routes nothing: every input is taken, every model makes sound. */
export const NO_INPUT_CHECK: InputCheck = { unsupported: () => undefined, makesSound: () => true };

export interface UnsupportedInput {
  readonly param: 'image_urls' | 'video_urls' | 'audio_urls' | 'web_search' | 'generate_audio';
  readonly message: string;
}

function count(n: number, what: string): string {
  return n === 0 ? `no ${what}s` : `at most ${n} ${what}${n === 1 ? '' : 's'}`;
}

/** Why `engine` (named in the message) cannot take the request's inputs, or undefined. */
export function unsupportedInput(
  model: ModelDefinition,
  params: GenerationParams,
  capabilities: EngineCapabilities,
  engine: string,
): UnsupportedInput | undefined {
  const by = `${model.id} is rendered by the engine "${engine}", which`;
  const inputs = unsupportedAsset(model, params, capabilities, by);
  if (inputs) return inputs;
  if (params.web_search && !capabilities.webSearch) {
    return {
      param: 'web_search',
      message: `${by} cannot search the web; web_search needs an ark engine with a Seedance 2.x model.`,
    };
  }
  if (!capabilities.assetIds) {
    for (const field of ['image_urls', 'video_urls', 'audio_urls'] as const) {
      const index = params[field].findIndex(isAssetIdUrl);
      if (index >= 0) {
        return {
          param: field,
          message: `${by} cannot take ${field}[${index}], an asset:// id of Ark's asset library: only an ark engine can.`,
        };
      }
    }
  }
  if (params.generate_audio && !capabilities.audio) {
    return {
      param: 'generate_audio',
      message: `${by} makes no sound of its own: leave generate_audio out, or send false.`,
    };
  }
  return undefined;
}

function unsupportedAsset(
  model: ModelDefinition,
  params: GenerationParams,
  capabilities: EngineCapabilities,
  by: string,
): UnsupportedInput | undefined {
  if (model.mode === 'image') {
    if (!capabilities.firstFrame) {
      return { param: 'image_urls', message: `${by} takes no first-frame image.` };
    }
    if (params.image_urls.length > 1 && !capabilities.lastFrame) {
      return { param: 'image_urls', message: `${by} takes a first frame but no last frame: send one image.` };
    }
    return undefined;
  }
  if (model.mode !== 'reference') return undefined;
  const checks = [
    ['image_urls', params.image_urls.length, capabilities.referenceImages, 'reference image'],
    ['video_urls', params.video_urls.length, capabilities.referenceVideos, 'reference video'],
    ['audio_urls', params.audio_urls.length, capabilities.referenceAudios, 'reference audio file'],
  ] as const;
  for (const [param, given, most, what] of checks) {
    if (given > most)
      return { param, message: `${by} takes ${count(most, what)}; this request has ${given}.` };
  }
  return undefined;
}

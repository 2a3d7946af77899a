/**
 * What each Seedance model on Ark takes, from BytePlus's "Create a video generation task" page
 * (docs.byteplus.com/en/docs/ModelArk/1520757, Seedance 2.5 edition) and Volcengine's copy of it
 * (volcengine.com/docs/82379/1520757): resolutions, durations, where `ratio: adaptive` and `seed` are taken,
 * which images play which role, and the reference media limits. The 1.0 lite models (being retired) are not
 * covered.
 */
import type { EngineCapabilities } from '../../domain/engine-capabilities.js';
import type { ArkModelFamily, ArkOptions } from './ark-options.js';

export type ArkResolution = '480p' | '720p' | '1080p';

export interface ArkModelProfile {
  readonly family: ArkModelFamily;
  /** Of those a request can ask for (the 2.0 model's 4k is never needed). */
  readonly resolutions: readonly ArkResolution[];
  /** Whole seconds, any in between. */
  readonly minSeconds: number;
  readonly maxSeconds: number;
  /** 2.5 takes only `ratio: adaptive` with a first frame: the video has the image's shape. */
  readonly framesFixRatio: boolean;
  /** The newest doc lists `seed` for 1.0 pro, 1.0 pro fast and 1.5 pro only. */
  readonly seed: boolean;
  /** `generate_audio`: 1.5 pro and the 2.x models make sound (mono). */
  readonly audio: boolean;
  readonly inputs: Omit<EngineCapabilities, 'audio'>;
  /** Each reference video or audio clip: at least and at most this many seconds; all of either kind together at most `totalSeconds`. */
  readonly referenceSeconds: { readonly min: number; readonly max: number; readonly total: number };
  /** 2.0 refuses reference audio without a reference image or video beside it. */
  readonly audioNeedsVisual: boolean;
  /** `tools: [{"type": "web_search"}]` in text-to-video: the 2.x models (ark-request.ts names the sources). */
  readonly webSearch: boolean;
}

const NO_REFERENCES = { referenceImages: 0, referenceVideos: 0, referenceAudios: 0 };
const SEEDANCE_2_0_INPUTS: Omit<EngineCapabilities, 'audio'> = {
  firstFrame: true,
  lastFrame: true,
  referenceImages: 9,
  referenceVideos: 3,
  referenceAudios: 3,
};
const SEEDANCE_2_0_SECONDS = { min: 2, max: 15, total: 15 };
const ALL_RESOLUTIONS: readonly ArkResolution[] = ['480p', '720p', '1080p'];

function seedance20(family: ArkModelFamily, resolutions: readonly ArkResolution[]): ArkModelProfile {
  return {
    family,
    resolutions,
    minSeconds: 4,
    maxSeconds: 15,
    framesFixRatio: false,
    seed: false,
    audio: true,
    inputs: SEEDANCE_2_0_INPUTS,
    referenceSeconds: SEEDANCE_2_0_SECONDS,
    audioNeedsVisual: true,
    webSearch: true,
  };
}

function seedance10(family: ArkModelFamily, lastFrame: boolean): ArkModelProfile {
  return {
    family,
    resolutions: ALL_RESOLUTIONS,
    minSeconds: 2,
    maxSeconds: 12,
    framesFixRatio: false,
    seed: true,
    audio: false,
    inputs: { firstFrame: true, lastFrame, ...NO_REFERENCES },
    referenceSeconds: SEEDANCE_2_0_SECONDS,
    audioNeedsVisual: true,
    webSearch: false,
  };
}

export const ARK_MODEL_PROFILES: Readonly<Record<ArkModelFamily, ArkModelProfile>> = {
  'seedance-2.0': seedance20('seedance-2.0', ALL_RESOLUTIONS),
  'seedance-2.0-fast': seedance20('seedance-2.0-fast', ['480p', '720p']),
  'seedance-2.0-mini': seedance20('seedance-2.0-mini', ['480p', '720p']),
  'seedance-2.5': {
    family: 'seedance-2.5',
    resolutions: ['480p', '720p'],
    minSeconds: 4,
    maxSeconds: 30,
    framesFixRatio: true,
    seed: false,
    audio: true,
    inputs: {
      firstFrame: true,
      lastFrame: true,
      referenceImages: 30,
      referenceVideos: 10,
      referenceAudios: 10,
    },
    referenceSeconds: { min: 2, max: 30, total: 30 },
    audioNeedsVisual: false,
    webSearch: true,
  },
  'seedance-1.5-pro': {
    family: 'seedance-1.5-pro',
    resolutions: ALL_RESOLUTIONS,
    minSeconds: 4,
    maxSeconds: 12,
    framesFixRatio: false,
    seed: true,
    audio: true,
    inputs: { firstFrame: true, lastFrame: true, ...NO_REFERENCES },
    referenceSeconds: SEEDANCE_2_0_SECONDS,
    audioNeedsVisual: true,
    webSearch: false,
  },
  'seedance-1.0-pro': seedance10('seedance-1.0-pro', true),
  'seedance-1.0-pro-fast': seedance10('seedance-1.0-pro-fast', false),
};

/** Model ids by family, BytePlus (`dreamina-seedance-2-0-260128`) and Volcengine (`doubao-seedance-…`) alike. */
const FAMILY_PATTERNS: readonly (readonly [RegExp, ArkModelFamily])[] = [
  [/seedance-2-0-fast/, 'seedance-2.0-fast'],
  [/seedance-2-0-mini/, 'seedance-2.0-mini'],
  [/seedance-2-0/, 'seedance-2.0'],
  [/seedance-2-5/, 'seedance-2.5'],
  [/seedance-1-5-pro/, 'seedance-1.5-pro'],
  [/seedance-1-0-pro-fast/, 'seedance-1.0-pro-fast'],
  [/seedance-1-0-pro/, 'seedance-1.0-pro'],
];

/** The model's profile: `model_family` if given, else read from the model id; undefined when neither says. */
export function arkModelProfile(
  options: Pick<ArkOptions, 'model' | 'model_family'>,
): ArkModelProfile | undefined {
  if (options.model_family) return ARK_MODEL_PROFILES[options.model_family];
  const found = FAMILY_PATTERNS.find(([pattern]) => pattern.test(options.model));
  return found && ARK_MODEL_PROFILES[found[1]];
}

/**
 * What each Veo model takes through the Gemini API (not Vertex AI), from "Generate videos with Veo 3.1 in
 * Gemini API" (ai.google.dev/gemini-api/docs/video: its parameter table and model features) and the official
 * SDKs' Gemini API converters (googleapis/python-genai `models.py`, googleapis/js-genai
 * `_models_converters.ts`). Models are told apart by their id's prefix; an id of a generation this table does
 * not know is given the Veo 3 set, which asks the least of it.
 */

export type VeoGeneration = '2.0' | '3.0' | '3.1';

export interface VeoModel {
  readonly generation: VeoGeneration;
  /** `durationSeconds` values (Veo 3.x: 4, 6, 8; Veo 2: 5, 6, 8). */
  readonly durations: readonly number[];
  /** Takes `resolution` (720p or 1080p; 1080p only for 8 s). Veo 2 makes 720p and refuses the field. */
  readonly resolution: boolean;
  /** 1080p in portrait too (Veo 3.0 makes 1080p in 16:9 only). */
  readonly portraitFullHd: boolean;
  /** Takes `lastFrame` with `image` (interpolation). */
  readonly lastFrame: boolean;
  /** How many `referenceImages` (type `asset`) it takes; they need a prompt and 8 s. */
  readonly referenceImages: number;
}

const VEO_3_1: VeoModel = {
  generation: '3.1',
  durations: [4, 6, 8],
  resolution: true,
  portraitFullHd: true,
  lastFrame: true,
  referenceImages: 3,
};

const VEO_3_0: VeoModel = {
  generation: '3.0',
  durations: [4, 6, 8],
  resolution: true,
  portraitFullHd: false,
  lastFrame: false,
  referenceImages: 0,
};

const VEO_2_0: VeoModel = {
  generation: '2.0',
  durations: [5, 6, 8],
  resolution: false,
  portraitFullHd: false,
  lastFrame: false,
  referenceImages: 0,
};

/** `veo-3.1-generate-preview`, `veo-3.1-fast-generate-preview`, `veo-3.0-generate-001`, `veo-2.0-generate-001`… */
export function veoModel(model: string): VeoModel {
  if (model.startsWith('veo-3.1-')) return VEO_3_1;
  if (model.startsWith('veo-2.0-') || model.startsWith('veo-2-')) return VEO_2_0;
  return VEO_3_0;
}

/** The duration that 1080p, reference images and extension require. */
export const VEO_LONGEST_SECONDS = 8;

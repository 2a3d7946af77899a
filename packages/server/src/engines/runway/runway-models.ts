/**
 * What each Runway video model takes, from Runway's OpenAPI (runwayml/openapi `openapi.json`, mirrored at
 * tryAGI/Runway `src/libs/Runway/openapi.json` @ 042b2cad705a, 2026-08-08): the branches of
 * `POST /v1/image_to_video` and `POST /v1/text_to_video`, whose bodies are unions on `model`.
 *
 * - gen4_turbo: image to video only (it has no text_to_video branch); one `first` frame; seed.
 * - gen4.5: text and image; one `first` frame; fewer ratios from text; seed.
 * - veo3.1, veo3.1_fast: text and image; a `first` and a `last` frame; durations 4, 6, 8; `audio`; no seed.
 * - seedance2, seedance2_fast, seedance2_mini, seedance2_5: text and image, `first` and `last` frames, and
 *   from text also `references` (images), `referenceVideos` and `referenceAudio`; `audio`; no seed.
 */

export const RUNWAY_MODEL_IDS = [
  'gen4_turbo',
  'gen4.5',
  'veo3.1',
  'veo3.1_fast',
  'seedance2',
  'seedance2_fast',
  'seedance2_mini',
  'seedance2_5',
] as const;

export type RunwayModelId = (typeof RUNWAY_MODEL_IDS)[number];

export interface RunwayReferenceLimits {
  readonly images: number;
  readonly videos: number;
  readonly audios: number;
}

export interface RunwayModel {
  /** `ratio` values of `POST /v1/image_to_video` (output sizes, `1280:720`). */
  readonly imageRatios: readonly string[];
  /** `ratio` values of `POST /v1/text_to_video`; undefined for a model that makes no video from text alone. */
  readonly textRatios: readonly string[] | undefined;
  /** `duration` values, seconds. */
  readonly durations: readonly number[];
  readonly takesSeed: boolean;
  /** Takes `audio` (make sound or not; Runway's default is to make it). */
  readonly takesAudio: boolean;
  /** `promptImage` may hold a `last` frame beside the `first`. */
  readonly takesLastFrame: boolean;
  /** The most `references`, `referenceVideos` and `referenceAudio` of `POST /v1/text_to_video`. */
  readonly references: RunwayReferenceLimits;
}

function seconds(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

const NO_REFERENCES: RunwayReferenceLimits = { images: 0, videos: 0, audios: 0 };

const GEN4_IMAGE_RATIOS = ['1280:720', '720:1280', '1104:832', '960:960', '832:1104', '1584:672'];
const VEO_RATIOS = ['1280:720', '720:1280', '1080:1920', '1920:1080'];
const SEEDANCE_SMALL_RATIOS = [
  '992:432',
  '864:496',
  '752:560',
  '640:640',
  '560:752',
  '496:864',
  '1470:630',
  '1280:720',
  '1112:834',
  '960:960',
  '834:1112',
  '720:1280',
];
const SEEDANCE_RATIOS = [
  ...SEEDANCE_SMALL_RATIOS,
  '2206:946',
  '1920:1080',
  '1664:1248',
  '1440:1440',
  '1248:1664',
  '1080:1920',
  '3840:1646',
  '3840:2160',
  '3840:2880',
  '3840:3840',
  '2880:3840',
  '2160:3840',
];
const SEEDANCE_2_5_RATIOS = SEEDANCE_SMALL_RATIOS.map((ratio) =>
  ratio === '864:496' ? '854:480' : ratio === '496:864' ? '480:854' : ratio,
);

const veo: RunwayModel = {
  imageRatios: VEO_RATIOS,
  textRatios: VEO_RATIOS,
  durations: [4, 6, 8],
  takesSeed: false,
  takesAudio: true,
  takesLastFrame: true,
  references: NO_REFERENCES,
};

function seedance(
  ratios: readonly string[],
  longest: number,
  references: RunwayReferenceLimits,
): RunwayModel {
  return {
    imageRatios: ratios,
    textRatios: ratios,
    durations: seconds(4, longest),
    takesSeed: false,
    takesAudio: true,
    takesLastFrame: true,
    references,
  };
}

const SEEDANCE_REFERENCES: RunwayReferenceLimits = { images: 9, videos: 3, audios: 3 };

export const RUNWAY_MODELS: Readonly<Record<RunwayModelId, RunwayModel>> = {
  gen4_turbo: {
    imageRatios: GEN4_IMAGE_RATIOS,
    textRatios: undefined,
    durations: seconds(2, 10),
    takesSeed: true,
    takesAudio: false,
    takesLastFrame: false,
    references: NO_REFERENCES,
  },
  'gen4.5': {
    imageRatios: GEN4_IMAGE_RATIOS,
    textRatios: ['1280:720', '720:1280'],
    durations: seconds(2, 10),
    takesSeed: true,
    takesAudio: false,
    takesLastFrame: false,
    references: NO_REFERENCES,
  },
  'veo3.1': veo,
  'veo3.1_fast': veo,
  seedance2: seedance(SEEDANCE_RATIOS, 15, SEEDANCE_REFERENCES),
  seedance2_fast: seedance(SEEDANCE_SMALL_RATIOS, 15, SEEDANCE_REFERENCES),
  seedance2_mini: seedance(SEEDANCE_SMALL_RATIOS, 15, SEEDANCE_REFERENCES),
  seedance2_5: seedance(SEEDANCE_2_5_RATIOS, 30, { images: 30, videos: 10, audios: 10 }),
};

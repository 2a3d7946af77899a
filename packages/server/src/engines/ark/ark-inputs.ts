/**
 * Which of a job's inputs go to Ark and in what role (the create page, "content"): image mode's images are
 * the `first_frame` and `last_frame`; reference mode's are `reference_image`, its videos `reference_video`,
 * its audio `reference_audio`; text mode sends none. What the model cannot take fails the task with
 * `invalid_asset` before anything is sent, or with `unsupported_inputs: drop` is left out.
 *
 * Ark takes a reference video only as a web URL that it downloads itself, never inline ("reference_video must
 * be provided as a web url"), so a video is sent as the http(s) URL the client gave; a video uploaded to this
 * service or given as a `data:` URL cannot be sent. Reference videos and audio must also be within Ark's
 * lengths and (videos) pixel counts, which are checked here from the downloaded copies, so a request Ark would
 * refuse fails with a clear message and costs nothing.
 */
import { TaskFailure } from '../../domain/errors.js';
import { isAssetIdUrl } from '../../domain/generation-request.js';
import type { LocalAsset, RenderJob } from '../../ports/engine.js';
import type { ArkModelProfile } from './ark-models.js';

export type ArkImageRole = 'first_frame' | 'last_frame' | 'reference_image';

export interface ArkInputPlan {
  readonly images: readonly { readonly asset: LocalAsset; readonly role: ArkImageRole }[];
  readonly videos: readonly LocalAsset[];
  readonly audios: readonly LocalAsset[];
}

/** Reference videos' pixel count (width × height), sides and shape, per the newest create page. */
const VIDEO_MIN_PIXELS = 409_600;
const VIDEO_MAX_PIXELS = 8_295_044;
const VIDEO_MIN_SIDE = 300;
const VIDEO_MAX_SIDE = 6000;
const VIDEO_MIN_SHAPE = 0.4;
const VIDEO_MAX_SHAPE = 2.5;

/** A URL Ark fetches itself: a web URL, or an `asset://` id of its asset library. */
function isWebUrl(url: string): boolean {
  return /^https?:\/\//i.test(url) || isAssetIdUrl(url);
}

function atMost(most: number, what: string): string {
  return most === 0 ? `no ${what}` : `at most ${most} ${what}`;
}

function name(asset: LocalAsset): string {
  return `${asset.field}[${asset.index}]`;
}

class InputPlanner {
  constructor(
    private readonly label: string,
    private readonly profile: ArkModelProfile,
    readonly drop: boolean,
  ) {}

  /** `assets` up to `most`; the rest are dropped, or fail the task with `why`. */
  keep(assets: readonly LocalAsset[], most: number, why: (asset: LocalAsset) => string): LocalAsset[] {
    const extra = assets[most];
    if (extra && !this.drop) throw this.refusal(extra, why(extra));
    return assets.slice(0, most);
  }

  refusal(asset: LocalAsset, why: string): TaskFailure {
    return new TaskFailure('invalid_asset', `${name(asset)}: ${this.label} ${why}`);
  }

  get model(): string {
    return `Seedance ${this.profile.family.replace('seedance-', '')}`;
  }
}

function planImageMode(job: RenderJob, planner: InputPlanner, profile: ArkModelProfile): ArkInputPlan {
  const { firstFrame, lastFrame } = profile.inputs;
  const kept = planner.keep(job.images, firstFrame ? (lastFrame ? 2 : 1) : 0, (asset) =>
    asset.index === 0
      ? `renders with ${planner.model}, which takes no first frame.`
      : `renders with ${planner.model}, which takes a first frame but no last frame.`,
  );
  const roles: readonly ArkImageRole[] = ['first_frame', 'last_frame'];
  return {
    images: kept.map((asset, index) => ({ asset, role: roles[index] ?? 'first_frame' })),
    videos: [],
    audios: [],
  };
}

function planReferenceMode(job: RenderJob, planner: InputPlanner, profile: ArkModelProfile): ArkInputPlan {
  const most = profile.inputs;
  const images = planner.keep(
    job.images,
    most.referenceImages,
    () => `renders with ${planner.model}, which takes ${atMost(most.referenceImages, 'reference images')}.`,
  );
  const videos = planner.keep(
    job.videos.filter((video) => isWebUrl(video.url)),
    most.referenceVideos,
    () => `renders with ${planner.model}, which takes ${atMost(most.referenceVideos, 'reference videos')}.`,
  );
  let audios = planner.keep(
    job.audios,
    most.referenceAudios,
    () =>
      `renders with ${planner.model}, which takes ${atMost(most.referenceAudios, 'reference audio files')}.`,
  );
  if (audios.length > 0 && profile.audioNeedsVisual && images.length + videos.length === 0) {
    audios = planner.keep(
      audios,
      0,
      () => `renders with ${planner.model}, which takes reference audio only beside an image or a video.`,
    );
  }
  return { images: images.map((asset) => ({ asset, role: 'reference_image' })), videos, audios };
}

/** A video that is not a web URL cannot be sent at all: fails the task, or is dropped with `drop`. */
function refuseInlineVideos(job: RenderJob, planner: InputPlanner): void {
  const inline = job.videos.find((video) => !isWebUrl(video.url));
  if (inline && !planner.drop) {
    throw planner.refusal(
      inline,
      'sends reference videos to Ark as the web (http or https) URL the request gave, because Ark downloads them itself and takes no inline video; this one was uploaded or given as a data: URL. Give a web URL for it.',
    );
  }
}

function checkLengths(
  assets: readonly LocalAsset[],
  what: string,
  planner: InputPlanner,
  profile: ArkModelProfile,
): void {
  const { min, max, total } = profile.referenceSeconds;
  let sum = 0;
  for (const asset of assets) {
    const seconds = asset.duration;
    if (seconds === undefined) continue;
    sum += seconds;
    if (seconds < min || seconds > max) {
      throw planner.refusal(
        asset,
        `sends ${what} of ${min} to ${max} s to ${planner.model}; this one is ${seconds.toFixed(1)} s.`,
      );
    }
  }
  const last = assets.at(-1);
  if (last && sum > total) {
    throw planner.refusal(
      last,
      `sends ${what} of at most ${total} s in all to ${planner.model}; these are ${sum.toFixed(1)} s.`,
    );
  }
}

function checkVideoPictures(videos: readonly LocalAsset[], planner: InputPlanner): void {
  for (const video of videos) {
    const { width, height } = video;
    if (width === undefined || height === undefined) continue;
    const pixels = width * height;
    const shape = width / height;
    if (
      pixels < VIDEO_MIN_PIXELS ||
      pixels > VIDEO_MAX_PIXELS ||
      Math.min(width, height) < VIDEO_MIN_SIDE ||
      Math.max(width, height) > VIDEO_MAX_SIDE ||
      shape < VIDEO_MIN_SHAPE ||
      shape > VIDEO_MAX_SHAPE
    ) {
      throw planner.refusal(
        video,
        `sends reference videos of ${VIDEO_MIN_PIXELS} to ${VIDEO_MAX_PIXELS} pixels (${VIDEO_MIN_SIDE}–${VIDEO_MAX_SIDE} px a side, width/height ${VIDEO_MIN_SHAPE}–${VIDEO_MAX_SHAPE}); this one is ${width}x${height}.`,
      );
    }
  }
}

/**
 * The inputs of `job` to send, with their roles; throws `invalid_asset` for what cannot be sent. A reference
 * video that is not a web URL is dropped with `drop` like any input the model cannot take.
 */
export function planArkInputs(
  job: RenderJob,
  profile: ArkModelProfile,
  options: { readonly label: string; readonly drop: boolean },
): ArkInputPlan {
  const planner = new InputPlanner(options.label, profile, options.drop);
  if (job.model.mode === 'text') return { images: [], videos: [], audios: [] };
  if (job.model.mode === 'image') return planImageMode(job, planner, profile);
  refuseInlineVideos(job, planner);
  const plan = planReferenceMode(job, planner, profile);
  checkVideoPictures(plan.videos, planner);
  checkLengths(plan.videos, 'reference videos', planner, profile);
  checkLengths(plan.audios, 'reference audio', planner, profile);
  return plan;
}

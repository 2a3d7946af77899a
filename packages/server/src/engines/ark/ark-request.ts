/**
 * A job as Ark's create request (`POST /contents/generations/tasks`, the create page's "Conventional method":
 * top-level fields, strictly validated, rather than `--flags` in the prompt): `model`, `content` (the prompt,
 * then the inputs in their roles), `resolution`, `ratio`, `duration`, `seed` where the model takes it,
 * `watermark`, `generate_audio` where the model makes sound, `return_last_frame: true` when the request asks
 * for the last frame (the create page: a PNG of the video's size without watermark, `content.last_frame_url`
 * of the retrieve answer), and `tools: [{"type": "web_search"}]` for a text-to-video request with
 * `web_search` on a 2.x model. Values are mapped onto what the model takes; the result is conformed to the job
 * afterwards.
 *
 * The web search tool's shape is not on a page of Ark's own this project could read: BytePlus's and
 * Volcengine's create pages as mirrored by others say only "tools: the tools the model may use; web search,
 * text-to-video only", and public clients of Ark (a Seedance 2.0 CLI, `seedance.py`) send exactly
 * `tools: [{"type": "web_search"}]`, the shape Ark's image and Responses APIs use for the same tool. That is
 * what is sent; docs/engines/ark.md says so.
 *
 * `asset://<id>` URLs (Ark's asset library) are passed on as they are, in the image, video and audio items.
 */

import { TaskFailure } from '../../domain/errors.js';
import { type AspectRatio, nearestAspectRatio, type Quality } from '../../domain/frame-size.js';
import type { RenderJob } from '../../ports/engine.js';
import { chooseSeconds } from '../size-mapping.js';
import { type AudioConversion, arkAudioUrl } from './ark-audio.js';
import { arkImageUrl } from './ark-image.js';
import type { ArkImageRole, ArkInputPlan } from './ark-inputs.js';
import type { ArkModelProfile, ArkResolution } from './ark-models.js';

export type ArkContentItem =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'image_url'; readonly image_url: { readonly url: string }; readonly role: ArkImageRole }
  | {
      readonly type: 'video_url';
      readonly video_url: { readonly url: string };
      readonly role: 'reference_video';
    }
  | {
      readonly type: 'audio_url';
      readonly audio_url: { readonly url: string };
      readonly role: 'reference_audio';
    };

export interface ArkCreateBody {
  readonly model: string;
  readonly content: readonly ArkContentItem[];
  readonly resolution: ArkResolution;
  readonly ratio: AspectRatio;
  readonly duration: number;
  readonly seed?: number;
  readonly watermark: boolean;
  readonly generate_audio?: boolean;
  readonly return_last_frame?: true;
  readonly tools?: readonly { readonly type: 'web_search' }[];
  /** Where Ark POSTs the task at each change of its status (ark-callback.ts), with `callbacks: true`. */
  readonly callback_url?: string;
}

/** The newest create page takes seeds up to 2^31 − 1 (older ones said 2^32 − 1); ours go to 2^32 − 1. */
const SEED_RANGE = 2_147_483_648;
/** Ark's limit on a request body; inputs are inline, so a request can reach it. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

/** The model's resolution nearest the job's quality, the higher on a tie. */
export function chooseResolution(quality: Quality, allowed: readonly ArkResolution[]): ArkResolution {
  const lines = (resolution: string) => Number.parseInt(resolution, 10);
  let best = allowed[0] ?? '720p';
  for (const resolution of allowed) {
    const distance = Math.abs(lines(resolution) - lines(quality));
    const bestDistance = Math.abs(lines(best) - lines(quality));
    if (distance < bestDistance || (distance === bestDistance && lines(resolution) > lines(best))) {
      best = resolution;
    }
  }
  return best;
}

/**
 * The `ratio` to ask for. A fixed ratio as asked. `adaptive` follows the first image or video in both
 * services, so it is passed on when an image or video is sent; with none (text mode), this service has
 * already made the frame 16:9 while Ark's `adaptive` would let the model pick any shape, so the frame's ratio
 * is sent. 2.5 takes only `adaptive` with a first frame.
 */
export function chooseRatio(job: RenderJob, profile: ArkModelProfile, sendsVisual: boolean): AspectRatio {
  if (job.model.mode === 'image' && sendsVisual && profile.framesFixRatio) return 'adaptive';
  const requested = job.params.aspect_ratio;
  if (requested !== 'adaptive') return requested;
  return sendsVisual ? 'adaptive' : nearestAspectRatio(job.frame.width, job.frame.height);
}

export function chooseDuration(seconds: number, profile: ArkModelProfile): number {
  const allowed = Array.from(
    { length: profile.maxSeconds - profile.minSeconds + 1 },
    (_, i) => profile.minSeconds + i,
  );
  return chooseSeconds(seconds, allowed);
}

export interface ArkRequestSettings {
  readonly model: string;
  readonly watermark: boolean;
  readonly label: string;
}

async function contentOf(
  job: RenderJob,
  plan: ArkInputPlan,
  settings: ArkRequestSettings,
  conversion: AudioConversion,
): Promise<ArkContentItem[]> {
  const content: ArkContentItem[] = [{ type: 'text', text: job.params.prompt }];
  for (const { asset, role } of plan.images) {
    content.push({ type: 'image_url', image_url: { url: await arkImageUrl(asset, settings.label) }, role });
  }
  for (const video of plan.videos) {
    content.push({ type: 'video_url', video_url: { url: video.url }, role: 'reference_video' });
  }
  for (const audio of plan.audios) {
    content.push({
      type: 'audio_url',
      audio_url: { url: await arkAudioUrl(audio, conversion) },
      role: 'reference_audio',
    });
  }
  return content;
}

/** The create request's body for `job`, whose inputs are `plan`. */
export async function arkCreateBody(
  job: RenderJob,
  profile: ArkModelProfile,
  plan: ArkInputPlan,
  settings: ArkRequestSettings,
  conversion: AudioConversion,
): Promise<ArkCreateBody> {
  const sendsVisual = plan.images.length + plan.videos.length > 0;
  return {
    model: settings.model,
    content: await contentOf(job, plan, settings, conversion),
    resolution: chooseResolution(job.params.quality, profile.resolutions),
    ratio: chooseRatio(job, profile, sendsVisual),
    duration: chooseDuration(job.params.duration, profile),
    ...(profile.seed ? { seed: job.params.seed % SEED_RANGE } : {}),
    watermark: settings.watermark,
    ...(profile.audio ? { generate_audio: job.params.generate_audio } : {}),
    ...(job.params.return_last_frame ? { return_last_frame: true as const } : {}),
    ...(job.params.web_search && job.model.mode === 'text' && profile.webSearch
      ? { tools: [{ type: 'web_search' as const }] }
      : {}),
  };
}

/** `body` as JSON, refused when the inline inputs make it larger than Ark takes. */
export function arkRequestJson(body: ArkCreateBody, label: string): string {
  const json = JSON.stringify(body);
  const bytes = Buffer.byteLength(json);
  if (bytes > MAX_BODY_BYTES) {
    throw new TaskFailure(
      'invalid_asset',
      `${label}: the request's images and audio come to ${(bytes / 1024 / 1024).toFixed(0)} MB inline, over Ark's 64 MB request limit; send fewer or smaller files.`,
    );
  }
  return json;
}

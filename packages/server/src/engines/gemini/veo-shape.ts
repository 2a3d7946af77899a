/**
 * The job's frame, quality and duration mapped onto what Veo makes: 16:9 or 9:16 (the job's orientation; a
 * square frame gets Veo's default, 16:9), 720p or 1080p, and the nearest allowed duration (the longer on a
 * tie). The video is then conformed to the job exactly (fitted to the frame, cut or held to the duration).
 *
 * 1080p is made only at 8 s. A 1080p job whose nearest duration is 8 s (7 s and longer, and every job with
 * reference images, which need 8 s) is asked at 1080p; a shorter one is asked at 720p for its own duration
 * and scaled up, rather than made at 1080p for 8 s and cut: cutting would drop the end of the action (and an
 * interpolation's last frame) and bill seconds nobody sees.
 */
import type { Quality } from '../../domain/frame-size.js';
import type { RenderJob } from '../../ports/engine.js';
import { chooseSeconds } from '../size-mapping.js';
import { VEO_LONGEST_SECONDS, type VeoModel } from './gemini-models.js';

export type VeoAspectRatio = '16:9' | '9:16';
export type VeoResolution = '720p' | '1080p';

export interface VeoShape {
  readonly aspectRatio: VeoAspectRatio;
  /** Undefined for a model that takes no `resolution` (Veo 2, which makes 720p). */
  readonly resolution: VeoResolution | undefined;
  readonly durationSeconds: number;
}

function resolutionFor(
  quality: Quality,
  aspectRatio: VeoAspectRatio,
  seconds: number,
  veo: VeoModel,
): VeoResolution | undefined {
  if (!veo.resolution) return undefined;
  const fullHd =
    quality === '1080p' && seconds === VEO_LONGEST_SECONDS && (aspectRatio === '16:9' || veo.portraitFullHd);
  return fullHd ? '1080p' : '720p';
}

export function veoShape(
  job: Pick<RenderJob, 'frame' | 'params'>,
  veo: VeoModel,
  withReferenceImages: boolean,
): VeoShape {
  const aspectRatio: VeoAspectRatio = job.frame.height > job.frame.width ? '9:16' : '16:9';
  const allowed = withReferenceImages ? [VEO_LONGEST_SECONDS] : veo.durations;
  const durationSeconds = chooseSeconds(job.params.duration, allowed);
  return {
    aspectRatio,
    resolution: resolutionFor(job.params.quality, aspectRatio, durationSeconds, veo),
    durationSeconds,
  };
}

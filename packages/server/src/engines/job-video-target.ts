/** What a job's result must be (docs/decisions.md#result-videos), for `conformVideo`. */
import type { VideoTarget } from '../media/conform-video.js';
import type { RenderJob } from '../ports/engine.js';

/**
 * `modelSound`: whether the engine's model makes a soundtrack of its own when asked (its capabilities' `audio`).
 * The result has sound when the request asked the model for it or gave an audio reference; the model's own track
 * is kept then, and the first reference laid under a video that came without one.
 */
export function jobVideoTarget(job: RenderJob, modelSound: boolean): VideoTarget {
  return {
    frame: job.frame,
    fps: job.fps,
    duration: job.params.duration,
    audio: job.audios.length > 0 || (job.params.generate_audio && modelSound),
    soundtrack: job.audios[0]?.path,
  };
}

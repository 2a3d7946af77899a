/** What a job's result must be (docs/decisions.md#result-videos), for `conformVideo`. */
import type { VideoTarget } from '../media/conform-video.js';
import type { RenderJob } from '../ports/engine.js';

export function jobVideoTarget(job: RenderJob): VideoTarget {
  return {
    frame: job.frame,
    fps: job.fps,
    duration: job.params.duration,
    audio: job.audios.length > 0,
    soundtrack: job.audios[0]?.path,
  };
}

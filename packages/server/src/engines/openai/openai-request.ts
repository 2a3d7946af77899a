/**
 * The `POST /v1/videos` of a job, in the server's dialect (video-server-dialect.ts): the frame size and
 * duration mapped onto the nearest the server takes (the engine's `sizes` and `seconds`, else the dialect's),
 * with `fps` the frame count for that duration, and the first image fitted to the chosen size as
 * `input_reference` (image-upload.ts).
 */
import type { RenderJob } from '../../ports/engine.js';
import { frameCount } from '../frame-count.js';
import { chooseSeconds, chooseSize, parseSize } from '../size-mapping.js';
import { readImageUpload } from './image-upload.js';
import type { OpenAiOptions } from './openai-options.js';
import type { CreateVideoRequest, VideoServerDialect } from './video-server-dialect.js';

export async function openAiCreateRequest(
  job: RenderJob,
  options: OpenAiOptions,
  dialect: VideoServerDialect,
  label: string,
): Promise<CreateVideoRequest> {
  const size = chooseSize(job.frame, options.sizes ?? dialect.defaultSizes(options.model));
  const seconds = chooseSeconds(job.params.duration, options.seconds ?? dialect.defaultSeconds);
  const first = job.images[0];
  return dialect.createRequest({
    model: options.model,
    prompt: job.params.prompt,
    size,
    seconds,
    seed: job.params.seed,
    frames:
      options.fps === undefined
        ? undefined
        : { fps: options.fps, count: frameCount(seconds * options.fps, options.frame_step) },
    extra: options.extra_body ?? {},
    image: first && (await readImageUpload(first.path, parseSize(size), label)),
  });
}

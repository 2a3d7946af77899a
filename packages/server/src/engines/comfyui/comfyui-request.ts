/**
 * What a job sends ComfyUI: the values of the workflow's placeholders (workflow-template.ts), from the job's
 * prompt, seed, frame, frame rate and duration, and for each image placeholder the job image it stands for
 * (uploaded first, the placeholder then carrying the name ComfyUI gave it).
 */
import type { RenderJob } from '../../ports/engine.js';

/** Which job image an image placeholder stands for (0-based), or a sentence saying why the job has none. */
export function imageIndexFor(placeholder: string, imageCount: number): number | string {
  if (placeholder === 'last_image') {
    return imageCount >= 2
      ? imageCount - 1
      : `the workflow uses {{last_image}}, which needs two or more images, but the request has ${imageCount}`;
  }
  const index = placeholder === 'image' ? 0 : Number(placeholder.slice('image_'.length)) - 1;
  if (index < imageCount) return index;
  const field = `image_urls[${index}]`;
  return `the workflow uses {{${placeholder}}}, but the request has no ${field} (it has ${imageCount} image${imageCount === 1 ? '' : 's'})`;
}

/** The text and number placeholders' values for `job`; image placeholders are added once uploaded. */
export function jobValues(job: RenderJob): Map<string, string | number> {
  const frames = Math.round(job.params.duration * job.fps);
  return new Map<string, string | number>([
    ['prompt', job.params.prompt],
    ['negative_prompt', ''],
    ['seed', job.params.seed],
    ['width', job.frame.width],
    ['height', job.frame.height],
    ['fps', job.fps],
    ['duration', job.params.duration],
    ['frames', frames],
    ['length', frames],
    ['frames_plus_one', frames + 1],
  ]);
}

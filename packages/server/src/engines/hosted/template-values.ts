/**
 * A job's values for an input template (input-template.ts), the duration, aspect ratio, resolution and size
 * mapped to the nearest the hosted model takes (the engines file lists them; without a list, the job's own),
 * and the job's assets as the URLs the engine sends.
 */
import { nearestAspectRatio } from '../../domain/frame-size.js';
import type { RenderJob } from '../../ports/engine.js';
import { chooseSeconds, chooseSize } from '../size-mapping.js';
import type { TemplateValues } from './input-template.js';

export interface TemplateMapping {
  /** Durations the model takes, seconds. */
  readonly durations?: readonly number[];
  /** Aspect ratios the model takes (`16:9`). */
  readonly aspect_ratios?: readonly string[];
  /** Resolutions the model takes (`480p`, `720p`, `1080p`). */
  readonly resolutions?: readonly string[];
  /** Frame sizes the model takes (`1280x720`), for `{{size}}`, `{{width}}`, `{{height}}`. */
  readonly sizes?: readonly string[];
}

export interface AssetUrls {
  readonly images: readonly string[];
  readonly videos: readonly string[];
  readonly audios: readonly string[];
}

function ratioValue(ratio: string): number {
  const [w, h] = ratio.split(':').map(Number) as [number, number];
  return w / h;
}

/** The listed ratio nearest in shape to the frame (compared on a log scale), or the frame's own. */
export function nearestRatio(width: number, height: number, allowed?: readonly string[]): string {
  if (!allowed || allowed.length === 0) return nearestAspectRatio(width, height);
  const target = Math.log(width / height);
  let best = allowed[0] as string;
  for (const ratio of allowed) {
    if (Math.abs(Math.log(ratioValue(ratio)) - target) < Math.abs(Math.log(ratioValue(best)) - target))
      best = ratio;
  }
  return best;
}

/** The listed resolution whose short side is nearest the job's quality (the higher on a tie). */
export function nearestResolution(quality: string, allowed?: readonly string[]): string {
  if (!allowed || allowed.length === 0) return quality;
  const lines = (value: string) => Number.parseInt(value, 10);
  let best = allowed[0] as string;
  for (const resolution of allowed) {
    const distance = Math.abs(lines(resolution) - lines(quality));
    const bestDistance = Math.abs(lines(best) - lines(quality));
    if (distance < bestDistance || (distance === bestDistance && lines(resolution) > lines(best)))
      best = resolution;
  }
  return best;
}

export function templateValues(job: RenderJob, urls: AssetUrls, mapping: TemplateMapping): TemplateValues {
  const size = chooseSize(job.frame, mapping.sizes);
  const [width, height] = size.split('x').map(Number) as [number, number];
  const duration = chooseSeconds(job.params.duration, mapping.durations);
  const values = new Map<string, string | number | boolean | readonly string[]>([
    ['prompt', job.params.prompt],
    ['seed', job.params.seed],
    ['duration', duration],
    ['fps', job.fps],
    ['frames', Math.round(duration * job.fps)],
    ['width', width],
    ['height', height],
    ['size', size],
    ['aspect_ratio', nearestRatio(job.frame.width, job.frame.height, mapping.aspect_ratios)],
    ['resolution', nearestResolution(job.params.quality, mapping.resolutions)],
    ['generate_audio', job.params.generate_audio],
  ]);
  const lists = [
    ['image', 'images', urls.images],
    ['video', 'videos', urls.videos],
    ['audio', 'audios', urls.audios],
  ] as const;
  for (const [one, all, list] of lists) {
    if (list.length > 0) values.set(all, list);
    for (const [i, url] of list.entries()) values.set(`${one}_${i + 1}`, url);
  }
  const [first] = urls.images;
  if (first !== undefined) values.set('image', first);
  if (job.model.mode === 'image' && urls.images.length === 2)
    values.set('last_image', urls.images[1] as string);
  return values;
}

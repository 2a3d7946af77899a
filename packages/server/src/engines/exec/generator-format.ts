/**
 * What an `exec` engine asks its generator to make for a job: the frame size among the generator's `sizes`,
 * its frame rate, and a frame count of the form it takes. The generator's video is conformed to the job
 * afterwards, so these only need to be the nearest the generator can do.
 */
import type { FrameSize } from '../../domain/frame-size.js';
import type { RenderJob } from '../../ports/engine.js';
import { frameCount } from '../frame-count.js';
import { chooseSize, parseSize } from '../size-mapping.js';
import type { ExecOptions } from './exec-options.js';

export interface GeneratorFormat {
  readonly size: FrameSize;
  readonly fps: number;
  readonly frames: number;
}

export type GeneratorOptions = Pick<ExecOptions, 'sizes' | 'fps' | 'frame_step'>;

export function generatorFormat(job: RenderJob, options: GeneratorOptions): GeneratorFormat {
  const fps = options.fps ?? job.fps;
  return {
    size: options.sizes ? parseSize(chooseSize(job.frame, options.sizes)) : job.frame,
    fps,
    frames: frameCount(Math.round(job.params.duration * fps), options.frame_step),
  };
}

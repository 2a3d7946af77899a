/** Render jobs and contexts for engine tests, and the checks every engine's result and progress must pass. */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import {
  type AspectRatio,
  type FrameSize,
  frameSize,
  type Quality,
  resolveAspectRatio,
} from '../../src/domain/frame-size.js';
import type { GenerationParams } from '../../src/domain/generation-request.js';
import { type BuiltInModelId, getModel } from '../../src/domain/models.js';
import { type LocalAsset, OUTPUT_FPS, type RenderContext, type RenderJob } from '../../src/ports/engine.js';
import { type Mp4Facts, mp4Facts } from './mp4-facts.js';

/** A downloaded asset: its path, and optionally the URL the client gave and (for visuals) its size. */
export interface JobAsset {
  readonly path: string;
  /** `https://example.test/<field>/<index>` when not given. */
  readonly url?: string;
  readonly width?: number;
  readonly height?: number;
}

export interface JobOptions {
  /** The exact task id; by default `<taskPrefix>-<n>`, unique in the process. */
  readonly taskId?: string;
  /** Default `task-test`. */
  readonly taskPrefix?: string;
  /** Default `videogen-2.0-text-to-video`. */
  readonly model?: BuiltInModelId;
  readonly prompt?: string;
  /** Seconds; default 4. */
  readonly duration?: number;
  /** Default `480p`. */
  readonly quality?: Quality;
  /** Default `16:9`. */
  readonly ratio?: AspectRatio;
  /** What `adaptive` resolves against; by default the first image, when it has a size. */
  readonly firstVisual?: FrameSize;
  /** Default 42. */
  readonly seed?: number;
  /** Default null. */
  readonly callbackUrl?: string | null;
  /** `generate_audio`; false unless given, so that renders are silent unless a test asks. */
  readonly generateAudio?: boolean;
  /** Downloaded files, by path or in full. */
  readonly images?: readonly (string | JobAsset)[];
  readonly videos?: readonly (string | JobAsset)[];
  readonly audios?: readonly (string | JobAsset)[];
  /** Write the result inside the work directory (`<workDir>/output.mp4`) rather than beside it. */
  readonly outputInWorkDir?: boolean;
}

let jobCount = 0;

function assets(field: LocalAsset['field'], given: readonly (string | JobAsset)[] = []): LocalAsset[] {
  return given.map((asset, index) => ({
    field,
    index,
    url: `https://example.test/${field}/${index}`,
    ...(typeof asset === 'string' ? { path: asset } : asset),
  }));
}

/** A job as the runner hands it to an engine, with its work directory and output path under `dir`. */
export function makeJob(dir: string, options: JobOptions = {}): RenderJob {
  jobCount++;
  const quality = options.quality ?? '480p';
  const ratio = options.ratio ?? '16:9';
  const images = assets('image_urls', options.images);
  const videos = assets('video_urls', options.videos);
  const audios = assets('audio_urls', options.audios);
  const first = images[0];
  const firstVisual =
    options.firstVisual ??
    (first?.width !== undefined && first.height !== undefined
      ? { width: first.width, height: first.height }
      : undefined);
  const params: GenerationParams = {
    prompt: options.prompt ?? 'glowing orange circles drifting over a deep blue sea at sunset',
    image_urls: images.map((asset) => asset.url),
    video_urls: videos.map((asset) => asset.url),
    audio_urls: audios.map((asset) => asset.url),
    duration: options.duration ?? 4,
    quality,
    aspect_ratio: ratio,
    seed: options.seed ?? 42,
    callback_url: options.callbackUrl ?? null,
    generate_audio: options.generateAudio ?? false,
  };
  const workDir = join(dir, `work-${jobCount}`);
  return {
    taskId: options.taskId ?? `${options.taskPrefix ?? 'task-test'}-${jobCount}`,
    model: getModel(options.model ?? 'videogen-2.0-text-to-video'),
    params,
    frame: frameSize(quality, resolveAspectRatio(ratio, firstVisual)),
    fps: OUTPUT_FPS,
    images,
    videos,
    audios,
    outputPath: options.outputInWorkDir
      ? join(workDir, 'output.mp4')
      : join(dir, `out-${jobCount}`, 'result.mp4'),
    workDir,
  };
}

/**
 * `makeJob` for one test file: jobs under the directory `dir()` names when each job is made (a temporary
 * directory the file creates in `before`), with the file's own defaults under each job's options.
 */
export function jobMaker(dir: () => string, defaults: JobOptions = {}): (options?: JobOptions) => RenderJob {
  return (options = {}) => makeJob(dir(), { ...defaults, ...options });
}

export interface RenderContextOptions {
  /** How long from now until the task's deadline; default 60 s. */
  readonly deadlineMs?: number;
  /** Called with each fraction after it is recorded. */
  readonly onProgress?: (fraction: number) => void;
}

/** A render context that records every progress fraction the engine reports. */
export function renderContext(
  signal: AbortSignal = new AbortController().signal,
  options: RenderContextOptions = {},
): RenderContext & { progress: number[] } {
  const progress: number[] = [];
  return {
    signal,
    deadline: Date.now() + (options.deadlineMs ?? 60_000),
    progress,
    onProgress: (fraction) => {
      progress.push(fraction);
      options.onProgress?.(fraction);
    },
  };
}

/**
 * Asserts what docs/decisions.md#result-videos promises of every result: H.264 yuv420p at the job's frame
 * size and 24 fps, the job's duration to a frame, faststart, and an AAC 48 kHz stereo track exactly when the
 * job asks for sound or has an audio reference (`sound` says otherwise, for a model that made none). Probes
 * `job.outputPath` unless given its facts; returns them.
 */
export async function assertContractVideo(
  job: RenderJob,
  facts?: Mp4Facts,
  sound = job.audios.length > 0 || job.params.generate_audio,
): Promise<Mp4Facts> {
  const result = facts ?? (await mp4Facts(job.outputPath));
  const { video, audio } = result;
  assert.ok(video, 'has a video stream');
  assert.equal(video.codec, 'h264');
  assert.equal(video.pixelFormat, 'yuv420p');
  assert.equal(video.width, job.frame.width);
  assert.equal(video.height, job.frame.height);
  assert.equal(video.frameRate, OUTPUT_FPS);
  assert.equal(video.frames, job.params.duration * OUTPUT_FPS);
  assert.ok(
    Math.abs(result.duration - job.params.duration) <= 1 / OUTPUT_FPS,
    `duration ${result.duration} is within a frame of ${job.params.duration}`,
  );
  assert.ok(result.moovBeforeMdat, `moov before mdat: ${result.boxes.join(' ')}`);
  assert.equal(audio !== undefined, sound, sound ? 'an audio stream' : 'no audio stream');
  if (audio) {
    assert.equal(audio.codec, 'aac');
    assert.equal(audio.sampleRate, 48_000);
    assert.equal(audio.channels, 2);
  }
  return result;
}

/**
 * Asserts that progress was reported more than once, stays in 0..1, never goes back (with `strictly`,
 * always goes forward) and ends at 1.
 */
export function assertProgressRisesToOne(
  progress: readonly number[],
  options: { readonly strictly?: boolean } = {},
): void {
  const shown = progress.join(', ');
  assert.ok(progress.length >= 2, `progress reported: ${shown}`);
  for (let i = 1; i < progress.length; i++) {
    const step = (progress[i] ?? 0) - (progress[i - 1] ?? 0);
    if (options.strictly) assert.ok(step > 0, `progress always goes forward: ${shown}`);
    else assert.ok(step >= 0, `progress never goes back: ${shown}`);
  }
  assert.ok(
    progress.every((p) => p >= 0 && p <= 1),
    `progress stays in 0..1: ${shown}`,
  );
  assert.equal(progress.at(-1), 1);
}

/**
 * The local engine's render (local-engine.ts): draws each frame of the job's scene with @napi-rs/canvas and
 * pipes it into ffmpeg. A module of its own, imported at the first render, because canvas and the scenes are
 * about 20 MB of memory that a process which never renders locally (an API process, a worker of hosted
 * engines, an idle server) does not need.
 */
import { mkdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { TaskFailure } from '../../domain/errors.js';
import { probe } from '../../media/probe.js';
import type { LocalAsset, RenderContext, RenderJob } from '../../ports/engine.js';
import { abortReason, untilAborted } from '../until-aborted.js';
import { type EncoderPreset, FrameEncoder, type FrameEncoderOptions } from './frame-encoder.js';
import { ImageScene } from './image-scene.js';
import { ReferenceScene } from './reference-scene.js';
import { type Scene, type SceneSettings, sceneFrame } from './scene.js';
import { writeSoundtrack } from './soundtrack.js';
import { assetLabel } from './still-image.js';
import { TextScene } from './text-scene.js';

const PROGRESS_INTERVAL_MS = 250;
/** The engine's own soundtrack, in the job's work directory. */
const SOUNDTRACK_FILE = 'soundtrack.wav';

async function checkSoundtrack(asset: LocalAsset, signal: AbortSignal): Promise<void> {
  let hasAudio: boolean;
  try {
    hasAudio = (await probe(asset.path, signal)).streams.some((s) => s.type === 'audio');
  } catch (error) {
    if (signal.aborted) throw error;
    throw new TaskFailure('invalid_asset', `${assetLabel(asset)}: the file is not readable audio.`, {
      cause: error,
    });
  }
  if (!hasAudio)
    throw new TaskFailure('invalid_asset', `${assetLabel(asset)}: the file has no audio stream.`);
}

/** What the job's scene draws: its size, frames and seed. */
export function sceneSettings(job: RenderJob): SceneSettings {
  return {
    frame: sceneFrame(job.frame, job.model.fast),
    fps: job.fps,
    frameCount: Math.round(job.params.duration * job.fps),
    fast: job.model.fast,
    seed: job.params.seed,
    prompt: job.params.prompt,
  };
}

/** How the job's frames are encoded: x264's preset. */
export function encoderPreset(job: RenderJob): EncoderPreset {
  return job.model.fast ? 'ultrafast' : 'veryfast';
}

export async function renderLocal(job: RenderJob, context: RenderContext, ffmpegPath: string): Promise<void> {
  const { signal } = context;
  signal.throwIfAborted();
  const settings = sceneSettings(job);
  let scene: Scene | undefined;
  let encoder: FrameEncoder | undefined;
  const stop = (): Promise<unknown> => {
    encoder?.kill();
    return Promise.all([encoder?.exited, scene?.close()]);
  };
  const onAbort = (): void => void stop();
  signal.addEventListener('abort', onAbort, { once: true });

  const run = async (): Promise<void> => {
    // This engine is its own upstream: the job is taken as soon as rendering begins.
    context.onAccepted?.();
    await Promise.all([
      mkdir(job.workDir, { recursive: true }),
      mkdir(dirname(job.outputPath), { recursive: true }),
    ]);
    const soundtrack = job.audios[0];
    // Without an audio reference, the engine makes its own soundtrack when asked; it is written before ffmpeg
    // starts, which reads it at once.
    let audio: FrameEncoderOptions['audio'] = soundtrack && { path: soundtrack.path, generated: false };
    if (!soundtrack && job.params.generate_audio) {
      audio = { path: join(job.workDir, SOUNDTRACK_FILE), generated: true };
      await writeSoundtrack(
        audio.path,
        job.params.prompt,
        job.params.seed,
        settings.frameCount / settings.fps,
      );
    }
    // ffmpeg starts (tens of milliseconds before it takes a frame) while the soundtrack is checked and the
    // scene loads; no frame is written before both are done, so a bad soundtrack fails as `invalid_asset`
    // whatever ffmpeg made of it meanwhile.
    encoder = new FrameEncoder({
      ffmpegPath,
      outputPath: job.outputPath,
      input: settings.frame,
      output: job.frame,
      fps: settings.fps,
      frameCount: settings.frameCount,
      preset: encoderPreset(job),
      ...(audio && { audio }),
    });
    // Both settle before anything else, so that a scene loaded after the check failed is closed too.
    const [checked, loading] = await Promise.allSettled([
      soundtrack && checkSoundtrack(soundtrack, signal),
      createScene(job, settings, ffmpegPath, signal),
    ]);
    if (loading.status === 'fulfilled') scene = loading.value;
    if (checked.status === 'rejected') throw checked.reason;
    if (loading.status === 'rejected') throw loading.reason;
    const loaded = loading.value;
    // The abort listener may already have run while the scene was loading.
    if (signal.aborted) {
      await stop();
      return;
    }
    let reportedAt = performance.now();
    for (let index = 0; index < settings.frameCount; index++) {
      if (signal.aborted) return;
      await encoder.write(await loaded.render(index));
      const now = performance.now();
      if (now - reportedAt >= PROGRESS_INTERVAL_MS) {
        reportedAt = now;
        context.onProgress((index + 1) / settings.frameCount);
      }
    }
    await encoder.finish();
  };

  try {
    await untilAborted(run(), signal);
  } catch (error) {
    await stop();
    await rm(job.outputPath, { force: true });
    if (signal.aborted) throw abortReason(signal);
    if (error instanceof TaskFailure) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new TaskFailure('generation_failed', `The local engine failed: ${reason}`, { cause: error });
  } finally {
    signal.removeEventListener('abort', onAbort);
    await scene?.close();
  }
  context.onProgress(1);
}

/** The job's scene, its inputs loaded. */
export async function createScene(
  job: RenderJob,
  settings: SceneSettings,
  ffmpegPath: string,
  signal: AbortSignal,
): Promise<Scene> {
  switch (job.model.mode) {
    case 'text':
      return new TextScene(settings);
    case 'image':
      return ImageScene.create(settings, job.images);
    case 'reference':
      return ReferenceScene.create(settings, {
        images: job.images,
        videos: job.videos,
        ffmpegPath,
        signal,
      });
  }
}

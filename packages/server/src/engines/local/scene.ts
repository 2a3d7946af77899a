/** What every local-engine scene is: a source of RGBA frames, asked for in order. */
import type { FrameSize } from '../../domain/frame-size.js';

export interface SceneSettings {
  /** The size the scene draws at: the output size, or less for the fast variants (the encoder scales up). */
  readonly frame: FrameSize;
  readonly fps: number;
  readonly frameCount: number;
  readonly fast: boolean;
  readonly seed: number;
  readonly prompt: string;
}

export interface Scene {
  /** The RGBA bytes (width x height x 4) of frame `index`; frames are asked for in order, each once. */
  render(index: number): Promise<Buffer>;
  /** Stops any decoder the scene runs, resolving once they have exited; safe to call more than once. */
  close(): Promise<void>;
}

/**
 * The fast variants draw their scene at this fraction of the output size and let the encoder scale it up:
 * a quarter of the pixels to draw, copy and convert, for a softer picture (docs/engines/local.md).
 */
export const FAST_SCENE_SCALE = 0.5;

/** The size a scene draws at for an output frame. */
export function sceneFrame(output: FrameSize, fast: boolean): FrameSize {
  if (!fast) return output;
  return {
    width: Math.max(2, Math.round(output.width * FAST_SCENE_SCALE)),
    height: Math.max(2, Math.round(output.height * FAST_SCENE_SCALE)),
  };
}

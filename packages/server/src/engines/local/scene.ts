/** What every local-engine scene is: a source of RGBA frames, asked for in order. */
import type { FrameSize } from '../../domain/frame-size.js';

export interface SceneSettings {
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

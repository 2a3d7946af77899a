/** What every configured engine is built with, besides its own options. */
import type { Dispatcher } from 'undici';

export interface EngineContext {
  /** The engines file's directory: relative paths in an engine's options (a workflow, a cwd) start here. */
  readonly baseDir: string;
  /** For calls to model servers; undici's global dispatcher when absent. */
  readonly dispatcher?: Dispatcher;
  /** The ffmpeg binary; `media/ffmpeg-paths.ts`'s choice when absent. */
  readonly ffmpegPath?: string;
}

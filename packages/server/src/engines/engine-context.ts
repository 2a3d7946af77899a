/** What every configured engine is built with, besides its own options. */
import type { Dispatcher } from 'undici';

export interface EngineContext {
  /** The engines file's directory: relative paths in an engine's options (a workflow, a cwd) start here. */
  readonly baseDir: string;
  /** For calls to model servers; undici's global dispatcher when absent. */
  readonly dispatcher?: Dispatcher;
  /**
   * For reading the status of jobs in flight (polls), within the engine's request budget
   * (`max_requests_per_second`): thousands of jobs wait their turn rather than flood the upstream. Submissions,
   * downloads and cancels, bounded by the render slots, do not wait behind them. `dispatcher` when absent.
   */
  readonly pollDispatcher?: Dispatcher;
  /** The ffmpeg binary; `media/ffmpeg-paths.ts`'s choice when absent. */
  readonly ffmpegPath?: string;
  /**
   * Where the provider is to call back when a job changes (engines/callbacks/provider-callbacks.ts), set for an
   * engine with `callbacks: true`: the submission carries it in the provider's own field.
   */
  readonly callbackUrl?: string;
}

/** The dispatcher an engine polls its jobs through. */
export function pollDispatcherOf(context: EngineContext): Dispatcher | undefined {
  return context.pollDispatcher ?? context.dispatcher;
}

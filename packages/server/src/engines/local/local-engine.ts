/**
 * The built-in local engine: a procedural CPU renderer. It draws each frame (text, image or reference
 * scene) and pipes it into ffmpeg, which writes the result MP4. The same job always gives the same bytes.
 * The drawing (local-render.ts, with @napi-rs/canvas) is loaded at the first render or check.
 */
import { ffmpegPath as defaultFfmpegPath } from '../../media/ffmpeg-paths.js';
import { FfmpegProcess } from '../../media/ffmpeg-process.js';
import type { Engine, RenderContext, RenderJob } from '../../ports/engine.js';

export interface LocalEngineOptions {
  /** The ffmpeg binary; defaults to `media/ffmpeg-paths.ts`'s choice. */
  readonly ffmpegPath?: string;
}

export class LocalEngine implements Engine {
  readonly name = 'local';
  readonly #ffmpegPath: string | undefined;

  constructor(options: LocalEngineOptions = {}) {
    this.#ffmpegPath = options.ffmpegPath;
  }

  /** Checks that ffmpeg runs and the caption font loads. */
  async check(signal: AbortSignal): Promise<void> {
    const ffmpeg = new FfmpegProcess(this.#ffmpegPath ?? defaultFfmpegPath(), ['-hide_banner', '-version'], {
      stdin: false,
      stdout: false,
    });
    const onAbort = (): void => ffmpeg.kill();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const exit = await ffmpeg.exited;
      signal.throwIfAborted();
      if (exit.code !== 0) throw new Error(ffmpeg.describeExit(exit));
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
    const { renderCaption } = await import('./caption.js');
    renderCaption('videogen', { width: 64, height: 36 });
  }

  async render(job: RenderJob, context: RenderContext): Promise<void> {
    context.signal.throwIfAborted();
    const { renderLocal } = await import('./local-render.js');
    await renderLocal(job, context, this.#ffmpegPath ?? defaultFfmpegPath());
  }
}

/**
 * One ffmpeg run that a signal stops: killed on abort (the abort's reason is thrown), and an exit other than 0
 * thrown as the caller's `TaskFailure`, with ffmpeg's own account of the exit after its message.
 */
import { TaskFailure } from '../domain/errors.js';
import { ffmpegPath } from './ffmpeg-paths.js';
import { FfmpegProcess } from './ffmpeg-process.js';

export interface AbortableFfmpegOptions {
  readonly signal: AbortSignal;
  readonly ffmpegPath?: string;
}

export async function runAbortableFfmpeg(
  args: readonly string[],
  options: AbortableFfmpegOptions,
  failure: () => TaskFailure,
): Promise<void> {
  const process = new FfmpegProcess(options.ffmpegPath ?? ffmpegPath(), [...args], {
    stdin: false,
    stdout: false,
  });
  const onAbort = (): void => process.kill();
  options.signal.addEventListener('abort', onAbort, { once: true });
  try {
    const exit = await process.exited;
    options.signal.throwIfAborted();
    if (exit.code !== 0) {
      const error = failure();
      throw new TaskFailure(error.code, `${error.message}: ${process.describeExit(exit)}`);
    }
  } finally {
    options.signal.removeEventListener('abort', onAbort);
  }
}

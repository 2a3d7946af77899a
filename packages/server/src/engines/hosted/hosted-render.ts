/**
 * What every hosted provider's engine does with a job once it has mapped it: run the task upstream
 * (hosted-task.ts), download the video it made into the job's work directory (a provider's URL expires and is
 * never handed to a client), and conform it to the job. Generation is 90 % of the progress, downloading and
 * conforming the rest.
 */
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { conformVideo } from '../../media/conform-video.js';
import type { RenderContext, RenderJob } from '../../ports/engine.js';
import { jobVideoTarget } from '../job-video-target.js';
import { withoutSecret } from '../redact-secret.js';
import { type HostedTaskSteps, runHostedTask } from './hosted-task.js';

const GENERATION_SHARE = 0.9;
const DOWNLOADED = 0.93;

export interface HostedRender<R> {
  readonly label: string;
  /** Kept out of every message. */
  readonly apiKey: string | undefined;
  readonly pollIntervalMs: number;
  readonly ffmpegPath: string | undefined;
  readonly steps: HostedTaskSteps<R>;
  /** Writes the video `result` points at to `path`. */
  download(result: R, path: string): Promise<void>;
}

export async function renderHosted<R>(
  job: RenderJob,
  context: RenderContext,
  hosted: HostedRender<R>,
): Promise<void> {
  const { signal } = context;
  signal.throwIfAborted();
  let reported = 0;
  const progress = (fraction: number): void => {
    if (fraction <= reported) return;
    reported = fraction;
    context.onProgress(fraction);
  };
  try {
    await mkdir(job.workDir, { recursive: true });
    await mkdir(dirname(job.outputPath), { recursive: true });
    const result = await runHostedTask(hosted.steps, {
      label: hosted.label,
      signal,
      get deadline() {
        return context.deadline;
      },
      pollIntervalMs: hosted.pollIntervalMs,
      onProgress: (fraction) => progress(GENERATION_SHARE * fraction),
      onAccepted: (handle) => context.onAccepted?.(handle),
      ...(context.resume ? { resume: context.resume } : {}),
      handsOver: () => context.handsOver?.() ?? false,
    });
    progress(GENERATION_SHARE);
    await context.upstreamDone?.();
    const raw = join(job.workDir, 'provider-video');
    await hosted.download(result, raw);
    progress(DOWNLOADED);
    await conformVideo(raw, job.outputPath, jobVideoTarget(job), {
      signal,
      label: hosted.label,
      ffmpegPath: hosted.ffmpegPath,
    });
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    throw withoutSecret(error, hosted.apiKey);
  }
  progress(1);
}

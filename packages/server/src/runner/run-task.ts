/**
 * Runs one claimed task to its end: download the assets, render with the model's engine, store the video (and,
 * with `return_last_frame`, its last frame as a PNG beside it), complete. Every store write is fenced by the
 * claim, so a worker that lost its lease changes nothing.
 */
import { stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import { downloadAssets } from '../assets/download-assets.js';
import { TaskFailure } from '../domain/errors.js';
import type { FrameSize } from '../domain/frame-size.js';
import { frameSize, resolveAspectRatio } from '../domain/frame-size.js';
import type { ModelCatalogue } from '../domain/model-catalogue.js';
import { lastFrameKey, resultKey } from '../domain/storage-keys.js';
import type { TaskError, TaskRecord } from '../domain/task.js';
import { extractLastFrame, fitLastFrame } from '../media/last-frame.js';
import type { Metrics } from '../metrics.js';
import { OUTPUT_FPS } from '../ports/engine.js';
import type { EngineRouter } from '../ports/engine-router.js';
import { resourceShortageOf } from '../ports/resource-shortage.js';
import type { Storage } from '../ports/storage.js';
import type { Claim, ClaimStore, RoutingStore, TaskStore } from '../ports/store.js';
import type { JobWakeups } from './job-wakeups.js';
import type { LeaseKeeper } from './lease-keeper.js';
import type { MachineHold } from './machine-permits.js';
import { ProgressReporter } from './progress-reporter.js';
import { renderWithFallback } from './render-with-fallback.js';
import { describeDuration, RunDeadline } from './run-deadline.js';
import { RunDirectory } from './run-directory.js';
import { RunStopped, type StopReason } from './run-stopped.js';
import { discardUnownedResult } from './unowned-result.js';

export interface RunTaskDependencies {
  readonly store: ClaimStore & RoutingStore & Pick<TaskStore, 'getTask'>;
  /** Keeps the leases of the pool's runs. */
  readonly leases: LeaseKeeper;
  readonly storage: Storage;
  readonly engines: EngineRouter;
  /** The server's models: a task's model by its ID. */
  readonly catalogue: ModelCatalogue;
  readonly dispatcher: Dispatcher;
  readonly logger: Logger;
  readonly leaseMs: number;
  readonly taskTimeoutMs: number;
  readonly assetMaxBytes: number;
  readonly assetTimeoutMs: number;
  /**
   * The process's scratch folder (scratch-space.ts), where each run makes its own; the OS temp directory when
   * absent.
   */
  readonly scratchDir?: string;
  /**
   * Called after this process changed a task's status, with the task when there is one: a callback was queued
   * with the change only if it has a `callback_url` (without a task: some tasks changed, any may have).
   */
  readonly onStatusChange?: (task?: TaskRecord) => void;
  /** Called after this process raised a task's progress. */
  readonly onProgress?: () => void;
  /** Called after this process failed a task (its upstream job, if any, is then cancelled). */
  readonly onTaskFailed?: () => void;
  /** Called when a run failed for lack of space (readiness: process/space-alarm.ts). */
  readonly onNoSpace?: () => void;
  readonly metrics?: Metrics;
  /** Where providers' callbacks wake the runs following their jobs; polls keep their pace when absent. */
  readonly wakeups?: JobWakeups;
}

export interface RunningTask {
  readonly taskId: string;
  stop(reason: StopReason): void;
  readonly done: Promise<void>;
}

/**
 * The video's last frame as a PNG of the frame's size, at `path`: the engine's upstream's own picture where it
 * wrote one (Ark's `last_frame_url`), brought to the frame as the video was; else taken from the video.
 */
async function lastFrameOf(
  rendered: { readonly engine: string; readonly outputPath: string; readonly lastFramePath?: string },
  frame: FrameSize,
  path: string,
  signal: AbortSignal,
): Promise<string> {
  const upstream = rendered.lastFramePath && (await stat(rendered.lastFramePath).catch(() => undefined));
  if (rendered.lastFramePath && upstream && upstream.size > 0) {
    await fitLastFrame(rendered.lastFramePath, path, frame, `engine "${rendered.engine}"`, { signal });
  } else {
    await extractLastFrame(rendered.outputPath, path, { signal });
  }
  return path;
}

/** The scratch folder runs make their directories in. */
export function scratchParent(deps: Pick<RunTaskDependencies, 'scratchDir'>): string {
  return deps.scratchDir ?? tmpdir();
}

/**
 * Runs `task` in `directory`, made ahead by the caller (run-directory.ts says why), or in one made now; the
 * directory is removed when the run ends, and a directory that could not be made fails the task as any
 * other failure of the run does.
 */
export function runTask(
  task: TaskRecord,
  workerId: string,
  deps: RunTaskDependencies,
  directory: Promise<RunDirectory> = RunDirectory.make(scratchParent(deps)),
  /** The render slot the run holds, let go while a remote engine's upstream works; released at its end. */
  machine?: MachineHold,
): RunningTask {
  const controller = new AbortController();
  const stop = (reason: StopReason) => {
    if (!controller.signal.aborted) controller.abort(new RunStopped(reason));
  };
  const done = execute(task, workerId, deps, directory, controller.signal, stop, machine).finally(() =>
    machine?.release(),
  );
  return { taskId: task.id, stop, done };
}

/** What ffmpeg or an engine's command writes when its disk is full: their errors carry only their stderr. */
const NO_SPACE_MESSAGE = /No space left on device/i;

function noSpaceLeft(error: unknown): boolean {
  if (resourceShortageOf(error)?.kind === 'no_space') return true;
  // A failure of a process on this machine (an upstream's failure is `upstream_error`: its disk is not ours).
  return (
    error instanceof TaskFailure && error.code === 'generation_failed' && NO_SPACE_MESSAGE.test(error.message)
  );
}

function describeFailure(error: unknown, deadline: RunDeadline): TaskError {
  if (noSpaceLeft(error)) {
    return {
      code: 'storage_full',
      message: 'The server had no space left to write the task’s files or its video.',
    };
  }
  if (error instanceof TaskFailure) return { code: error.code, message: error.message };
  if (error instanceof RunStopped && error.reason === 'timeout') {
    return { code: 'timeout', message: `${deadline.limit}.` };
  }
  return { code: 'generation_failed', message: 'The engine failed to generate the video.' };
}

async function execute(
  task: TaskRecord,
  workerId: string,
  deps: RunTaskDependencies,
  made: Promise<RunDirectory>,
  signal: AbortSignal,
  stop: (reason: StopReason) => void,
  machine: MachineHold | undefined,
): Promise<void> {
  const claim: Claim = { taskId: task.id, attempt: task.attempts, workerId };
  const log = deps.logger.child({ task_id: task.id, worker_id: workerId, attempt: task.attempts });
  // The pool renews every run's lease together (lease-keeper.ts), and stops this run if it ends early.
  const letGo = deps.leases.hold(claim, stop);
  // The worker's own part; render-with-fallback.ts moves it while an upstream job works.
  const deadline = new RunDeadline(
    Date.now() + deps.taskTimeoutMs,
    `Generation did not finish within ${describeDuration(deps.taskTimeoutMs)}`,
    () => stop('timeout'),
  );
  const progress = new ProgressReporter(async (value) => {
    if (await deps.store.reportProgress(claim, value)) deps.onProgress?.();
  });
  let directory: RunDirectory | undefined;
  /** The keys this run stored (or began to store) its files under, while the task has not taken them. */
  let stored: string[] = [];
  const started = Date.now();
  const followed = deps.wakeups?.follow(task.id);

  try {
    const model = deps.catalogue.get(task.model);
    directory = await made;
    const workDir = directory.path;
    log.info({ model: task.model, engine: task.engine }, 'task started');

    // A job an earlier run submitted is resumed, never submitted again: it needs no pictures, and one whose link
    // has expired since must not fail it; an audio reference is still laid under a video that comes without sound.
    // An `adaptive` ratio left unresolved (its write failed) is still read from the first picture.
    const resuming = task.upstreamJob != null && task.params.aspect_ratio !== 'adaptive';
    const assets = await downloadAssets(
      resuming ? { ...task.params, image_urls: [], video_urls: [] } : task.params,
      {
        workDir,
        dispatcher: deps.dispatcher,
        storage: deps.storage,
        maxBytes: deps.assetMaxBytes,
        timeoutMs: deps.assetTimeoutMs,
      },
      signal,
    );
    const firstVisual = assets.images[0] ?? assets.videos[0];
    const dimensions =
      firstVisual?.width && firstVisual.height
        ? { width: firstVisual.width, height: firstVisual.height }
        : undefined;
    const ratio = resolveAspectRatio(task.params.aspect_ratio, dimensions);
    if (task.params.aspect_ratio !== ratio) {
      // Only what the task echoes: the render goes on with the frame whether or not this is stored.
      await deps.store.recordAspectRatio(claim, ratio).catch((error: unknown) => {
        log.warn({ err: error }, 'could not store the resolved aspect ratio');
      });
    }
    progress.update('assets', 1);
    const frame = frameSize(task.params.quality, ratio);
    const rendered = await renderWithFallback(
      {
        task,
        claim,
        job: { taskId: task.id, model, params: task.params, frame, fps: OUTPUT_FPS, ...assets },
        directory,
        signal,
        deadline,
        taskTimeoutMs: deps.taskTimeoutMs,
        onProgress: (fraction) => progress.update('render', fraction),
        ...(machine && { machine }),
        ...(followed && { pauseBeforePoll: (ms, pauseSignal) => followed.pause(ms, pauseSignal) }),
      },
      { ...deps, logger: log },
    );
    const { outputPath } = rendered;
    signal.throwIfAborted();
    const output = await stat(outputPath).catch(() => undefined);
    if (!output?.size) throw new TaskFailure('generation_failed', 'The engine produced no video.');

    const lastFrame = task.params.return_last_frame
      ? await lastFrameOf(rendered, frame, join(workDir, 'last-frame.png'), signal)
      : undefined;
    signal.throwIfAborted();

    progress.update('store', 0);
    const key = resultKey(task.id);
    stored = [key];
    try {
      await deps.storage.putFile(key, outputPath, 'video/mp4');
      if (lastFrame) {
        stored.push(lastFrameKey(task.id));
        await deps.storage.putFile(lastFrameKey(task.id), lastFrame, 'image/png');
      }
    } catch (error) {
      if (noSpaceLeft(error) || signal.aborted) throw error;
      // The storage's own words (a bucket, an endpoint) are for the log, not the task's owner; and the engine
      // did its part, so `generation_failed` would blame the wrong side.
      log.error({ err: error }, 'could not store the video');
      throw new TaskFailure('internal_error', 'The video was generated but the server could not store it.', {
        cause: error,
      });
    }
    await progress.settle();
    const completed = await deps.store.completeTask(claim, key);
    if (completed) {
      stored = [];
      deps.onStatusChange?.(task);
      deps.metrics?.renderDuration.observe({ model: task.model }, (Date.now() - started) / 1000);
      deps.metrics?.tasksFinished.inc({ model: task.model, status: 'completed', error_code: '' });
      deps.metrics?.recordUsage({
        model: task.model,
        engine: rendered.engine,
        quality: task.params.quality,
        videoSeconds: task.params.duration,
      });
    }
    log.info({ ms: Date.now() - started, completed, bytes: output.size }, 'task finished');
  } catch (error) {
    await progress.settle();
    const reason = signal.reason instanceof RunStopped ? signal.reason.reason : undefined;
    if (reason === 'shutdown') {
      await deps.store.releaseTask(claim);
      log.info('task released at shutdown');
    } else if (reason === 'cancelled') {
      // The cancel already failed the task (and queued its callback); this run only lets go.
      log.info('task cancelled; render stopped');
    } else if (reason === 'lease_lost') {
      deps.metrics?.leasesLost.inc();
      log.warn('lease lost; another worker may take the task');
    } else {
      const failure = describeFailure(reason ? signal.reason : error, deadline);
      if (failure.code === 'storage_full') {
        const code = resourceShortageOf(error)?.code ?? 'ENOSPC';
        log.error({ err: error, code }, `task failed: no space left to write (${code})`);
        deps.onNoSpace?.();
      } else if (failure.code === 'generation_failed' || failure.code === 'internal_error') {
        log.error({ err: error }, 'task failed');
      } else {
        log.info({ code: failure.code, message: failure.message }, 'task failed');
      }
      if (await deps.store.failTask(claim, failure)) {
        deps.onStatusChange?.(task);
        deps.onTaskFailed?.();
        deps.metrics?.tasksFinished.inc({ model: task.model, status: 'failed', error_code: failure.code });
      }
    }
  } finally {
    followed?.close();
    letGo();
    deadline.clear();
    // A cancel (or a deletion, or a lost lease) that came while the video was being stored did not stop it.
    for (const key of stored) await discardUnownedResult(task.id, key, { ...deps, logger: log });
    // Removed also when the run failed before taking it.
    await (directory ?? (await made.catch(() => undefined)))?.remove();
  }
}

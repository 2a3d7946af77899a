/**
 * A task on a hosted provider's queue API, the same for every provider: submit it (or resume the one an earlier
 * run submitted), poll it until it ends (reporting the provider's progress), and cancel it upstream on every
 * other way out (the client's cancel, the task's time limit, the provider's failing answers), so nobody pays for
 * a video nobody waits for; but not once the job is stored with the task: then a later run resumes it (after a
 * deploy's shutdown, a lost lease) or the task's failure cancels it (`Engine.cancelJob`). Each provider supplies
 * the three calls and maps its statuses onto `HostedStatus`; 429 `Retry-After` and transient failures are
 * retried inside each call (upstream-request.ts). Polls slow down as the job ages (poll-delay.ts); a provider's
 * callback, where the engine asked for one, ends the pause before the next poll (`pauseBeforePoll`).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { type TaskErrorCode, TaskFailure } from '../../domain/errors.js';
import type { UpstreamHandle } from '../../domain/upstream-job.js';
import { pollDelay } from '../poll-delay.js';

/**
 * How long cancelling an upstream job may take. It is a courtesy to the provider (so nobody pays for a video nobody
 * waits for), and a stopped render does not wait long for it.
 */
export const CANCEL_TIMEOUT_MS = 5000;

export type HostedState = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

export interface HostedStatus<R> {
  readonly state: HostedState;
  /** 0..1, where the provider reports it. */
  readonly progress?: number;
  /** Set when `succeeded`. */
  readonly result?: R;
  /** Set when `failed`: `refused` for a content-policy or input refusal (`upstream_refused`, never retried). */
  readonly failure?: {
    readonly refused: boolean;
    readonly message: string;
    /** The task's error code, where the upstream's failure says more than refused or not (an asset's fault). */
    readonly code?: TaskErrorCode;
  };
}

export interface HostedTaskSteps<R> {
  /** Creates the task upstream; resolves with the provider's id for it, and whatever else polls and cancels it. */
  submit(): Promise<UpstreamHandle>;
  /** From the handle alone: the next run of the task may be another process's. */
  poll(job: UpstreamHandle): Promise<HostedStatus<R>>;
  /** Best effort, within its own short time limit; never rejects. */
  cancel(job: UpstreamHandle): Promise<void>;
}

export interface HostedTaskOptions {
  /** Names the engine in messages: `ark engine "seedance"`. */
  readonly label: string;
  readonly signal: AbortSignal;
  /** When the task's time limit runs out (epoch ms). */
  readonly deadline: number;
  readonly pollIntervalMs: number;
  /** The provider's progress, 0..1. */
  onProgress(fraction: number): void;
  /** Called once, when `submit` has resolved with the provider's id for the task; waited for. */
  onAccepted?(job: UpstreamHandle): void | Promise<void>;
  /** The job an earlier run submitted: polled, never submitted again. */
  readonly resume?: UpstreamHandle;
  /** Whether the job is the task's now (stored with it), whose end decides it: then it is not cancelled here. */
  handsOver?(): boolean;
  /** Waits before the next poll, less when the job is woken (`RenderContext.pauseBeforePoll`); a timer when absent. */
  pauseBeforePoll?(ms: number, signal: AbortSignal): Promise<void>;
}

/** Runs the task upstream to its end; resolves with its result, or rejects with what ended it. */
export async function runHostedTask<R>(steps: HostedTaskSteps<R>, options: HostedTaskOptions): Promise<R> {
  const { label, signal } = options;
  signal.throwIfAborted();
  let job = options.resume;
  if (!job) {
    job = await steps.submit();
    await options.onAccepted?.(job);
  }
  let ended = false;
  const followed = Date.now();
  let progress: number | undefined;
  try {
    for (;;) {
      const status = await steps.poll(job);
      if (status.progress !== undefined) {
        progress = Math.min(1, Math.max(0, status.progress));
        options.onProgress(progress);
      }
      if (status.state === 'succeeded') {
        ended = true;
        if (status.result === undefined) {
          throw new TaskFailure(
            'upstream_error',
            `${label}: the provider finished the task without a video.`,
          );
        }
        return status.result;
      }
      if (status.state === 'failed' || status.state === 'cancelled') {
        ended = true;
        const failure = status.failure ?? {
          refused: false,
          message: status.state === 'cancelled' ? 'the provider cancelled the task' : 'no reason given',
        };
        throw new TaskFailure(
          failure.code ?? (failure.refused ? 'upstream_refused' : 'upstream_error'),
          `${label}: ${failure.message}`,
        );
      }
      const remaining = options.deadline - Date.now();
      if (remaining <= 0) {
        const done = progress === undefined ? '' : ` (${Math.round(progress * 100)}% done)`;
        throw new TaskFailure(
          'timeout',
          `${label}: the task was still ${status.state} upstream when the task's time limit ran out${done}.`,
        );
      }
      const delay = Math.min(pollDelay(options.pollIntervalMs, Date.now() - followed), remaining);
      const pause = options.pauseBeforePoll
        ? options.pauseBeforePoll(delay, signal)
        : sleep(delay, undefined, { signal });
      await pause.catch(() => {
        throw signal.reason;
      });
    }
  } finally {
    if (!ended && !options.handsOver?.()) await steps.cancel(job);
  }
}

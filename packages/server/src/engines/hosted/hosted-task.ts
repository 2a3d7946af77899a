/**
 * A task on a hosted provider's queue API, the same for every provider: submit it, poll it until it ends
 * (reporting the provider's progress), and cancel it upstream on every other way out (the client's cancel, a
 * lost lease, shutdown, the task's time limit, the provider becoming unreachable), so nobody pays for a
 * video nobody waits for. Each provider supplies the three calls and maps its statuses onto `HostedStatus`;
 * 429 `Retry-After` and transient failures are retried inside each call (upstream-request.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { TaskFailure } from '../../domain/errors.js';

export type HostedState = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

export interface HostedStatus<R> {
  readonly state: HostedState;
  /** 0..1, where the provider reports it. */
  readonly progress?: number;
  /** Set when `succeeded`. */
  readonly result?: R;
  /** Set when `failed`: `refused` for a content-policy or input refusal (`upstream_refused`, never retried). */
  readonly failure?: { readonly refused: boolean; readonly message: string };
}

export interface HostedTaskSteps<R> {
  /** Creates the task upstream; resolves with the provider's id for it. */
  submit(): Promise<string>;
  poll(id: string): Promise<HostedStatus<R>>;
  /** Best effort, within its own short time limit; never rejects. */
  cancel(id: string): Promise<void>;
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
  /** Called once, when `submit` has resolved with the provider's id for the task. */
  onAccepted?(): void;
}

/** Runs the task upstream to its end; resolves with its result, or rejects with what ended it. */
export async function runHostedTask<R>(steps: HostedTaskSteps<R>, options: HostedTaskOptions): Promise<R> {
  const { label, signal } = options;
  signal.throwIfAborted();
  const id = await steps.submit();
  options.onAccepted?.();
  let ended = false;
  try {
    for (;;) {
      const status = await steps.poll(id);
      if (status.progress !== undefined) options.onProgress(Math.min(1, Math.max(0, status.progress)));
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
          failure.refused ? 'upstream_refused' : 'upstream_error',
          `${label}: ${failure.message}`,
        );
      }
      const remaining = options.deadline - Date.now();
      if (remaining <= 0) {
        throw new TaskFailure(
          'timeout',
          `${label}: the task was still ${status.state} upstream when the task's time limit ran out.`,
        );
      }
      await sleep(Math.min(options.pollIntervalMs, remaining), undefined, { signal }).catch(() => {
        throw signal.reason;
      });
    }
  } finally {
    if (!ended) await steps.cancel(id);
  }
}

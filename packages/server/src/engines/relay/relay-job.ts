/**
 * The other server's task object, read defensively (it may be another implementation of the API), as a hosted
 * task's status: its progress, its first result link once completed, and what its failure becomes here: asset
 * problems keep their code, so the client learns its asset was at fault; everything else is `upstream_error`
 * quoting the other server's code and message.
 */
import { type TaskErrorCode, TaskFailure } from '../../domain/errors.js';
import type { HostedStatus } from '../hosted/hosted-task.js';
import { excerptOf } from '../upstream-request.js';

export interface RelayTask {
  readonly id: string;
  readonly status: string;
  /** 0..100. */
  readonly progress: number;
  readonly results: readonly string[];
  readonly error: { readonly code: string; readonly message: string } | undefined;
}

/** Codes whose cause is the request's own asset, which the client should see as such. */
const ASSET_CODES: ReadonlySet<string> = new Set<TaskErrorCode>(['invalid_asset', 'asset_fetch_failed']);

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** `value` as a task; `upstream_error` when it has no id or status. */
export function readRelayTask(value: unknown, label: string): RelayTask {
  const task = asRecord(value);
  if (typeof task?.id !== 'string' || task.id === '' || typeof task.status !== 'string') {
    throw new TaskFailure('upstream_error', `${label}: its answer is not a task: ${excerptOf(value)}`);
  }
  const error = asRecord(task.error);
  return {
    id: task.id,
    status: task.status,
    progress: typeof task.progress === 'number' && Number.isFinite(task.progress) ? task.progress : 0,
    results: Array.isArray(task.results)
      ? task.results.filter((r): r is string => typeof r === 'string')
      : [],
    error: error
      ? {
          code: typeof error.code === 'string' ? error.code : 'unknown',
          message: typeof error.message === 'string' ? error.message : '',
        }
      : undefined,
  };
}

/** Statuses after which the task does not change. */
function isFinalStatus(status: string): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled' || status === 'expired';
}

/** The failure of a task that ended without a video. */
export function relayFailure(task: RelayTask, label: string): TaskFailure {
  const code = task.error?.code ?? task.status;
  const message = task.error?.message ?? '';
  if (ASSET_CODES.has(code)) {
    return new TaskFailure(code as TaskErrorCode, `${label}: ${message || code}`);
  }
  return new TaskFailure(
    'upstream_error',
    `${label}: its task ${task.id} ${task.status === 'failed' ? 'failed' : `ended ${task.status}`} with ${code}${message ? `: ${message}` : '.'}`,
  );
}

/** The task as a hosted status; the result is its first result link, signed, maybe on another host. */
export function relayStatus(task: RelayTask, label: string): HostedStatus<string> {
  const progress = Math.max(0, Math.min(100, task.progress)) / 100;
  if (!isFinalStatus(task.status)) {
    return { state: task.status === 'pending' ? 'queued' : 'running', progress };
  }
  if (task.status !== 'completed') {
    const failure = relayFailure(task, label);
    return {
      state: 'failed',
      failure: { refused: false, code: failure.code, message: failure.message.replace(`${label}: `, '') },
    };
  }
  const link = task.results[0];
  if (!link) {
    return {
      state: 'failed',
      failure: { refused: false, message: `its task ${task.id} completed without a result link.` },
    };
  }
  return { state: 'succeeded', progress, result: link };
}

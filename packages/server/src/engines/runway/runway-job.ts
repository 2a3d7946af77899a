/**
 * Runway's task (`GET /v1/tasks/{id}`, a union on `status` in its OpenAPI) as a hosted task's status:
 * PENDING and THROTTLED (held back by the organisation's concurrency limit) are queued, RUNNING carries
 * `progress` 0..1, SUCCEEDED the video's URL in `output`, FAILED `failure` and optionally `failureCode`.
 * Content moderation's codes (`SAFETY.*`, `INPUT_PREPROCESSING.SAFETY.*`; "do not retry", Runway's task
 * failures page) are refusals; every other failure is the provider's error.
 */
import { TaskFailure } from '../../domain/errors.js';
import type { HostedStatus } from '../hosted/hosted-task.js';
import { excerptOf } from '../upstream-request.js';

const REFUSAL_CODE_PREFIXES = ['SAFETY.', 'INPUT_PREPROCESSING.SAFETY.'];

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function notATask(value: unknown, what: string, label: string): TaskFailure {
  return new TaskFailure(
    'upstream_error',
    `${label}: ${what} answered something that is not a task: ${excerptOf(value)}`,
  );
}

/** The id in the answer to a create request (`{id, estimatedCost}`; older API versions send only `id`). */
export function createdTaskId(answer: unknown, what: string, label: string): string {
  const id = asRecord(answer)?.id;
  if (typeof id !== 'string' || id === '') throw notATask(answer, what, label);
  return id;
}

export function runwayTaskStatus(answer: unknown, what: string, label: string): HostedStatus<string> {
  const task = asRecord(answer);
  switch (task?.status) {
    case 'PENDING':
    case 'THROTTLED':
      return { state: 'queued' };
    case 'RUNNING': {
      const progress = task.progress;
      return {
        state: 'running',
        progress: typeof progress === 'number' && Number.isFinite(progress) ? progress : undefined,
      };
    }
    case 'SUCCEEDED': {
      const output = Array.isArray(task.output) ? task.output : [];
      return { state: 'succeeded', result: output.find((url): url is string => typeof url === 'string') };
    }
    case 'FAILED': {
      const reason =
        typeof task.failure === 'string' && task.failure !== '' ? task.failure : 'no reason given';
      const code = typeof task.failureCode === 'string' ? task.failureCode : undefined;
      const refused = code !== undefined && REFUSAL_CODE_PREFIXES.some((prefix) => code.startsWith(prefix));
      return {
        state: 'failed',
        failure: {
          refused,
          message: `Runway ${refused ? 'refused' : 'failed'} the task: ${reason}${code ? ` (${code})` : ''}`,
        },
      };
    }
    case 'CANCELLED':
      return { state: 'cancelled', failure: { refused: false, message: 'Runway cancelled the task.' } };
    default:
      throw notATask(answer, what, label);
  }
}

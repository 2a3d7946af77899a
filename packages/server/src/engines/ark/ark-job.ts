/**
 * Ark's answers about a task, read into what the hosted task loop needs (hosted-task.ts). A task is `queued`,
 * `running`, then `succeeded` (`content.video_url`), `failed` (`error: {code, message}`), `cancelled` (a
 * queued task that was deleted) or `expired` (still queued or running at `execution_expires_after`); Ark
 * reports no progress. Errors come as `{"error": {"code", "message", "param", "type"}}`. Content moderation
 * refuses inputs when the task is created (HTTP 400 `InputTextSensitiveContentDetected`,
 * `InputImageSensitiveContentDetected.PrivacyInformation`, …) and fails the task afterwards for its output
 * (`OutputVideoSensitiveContentDetected`, `OutputAudioSensitiveContentDetected.PolicyViolation`): both are
 * refusals (`upstream_refused`). With `return_last_frame`, a succeeded task also has `content.last_frame_url`, a
 * PNG of the video's size without watermark, valid 24 h like the video's link. Sources: the create, retrieve and error-code pages (docs.byteplus.com
 * ModelArk 1520757, 1521309, 1299023; volcengine.com/docs/82379 the same).
 */
import { TaskFailure } from '../../domain/errors.js';
import type { HostedStatus } from '../hosted/hosted-task.js';
import { excerptOf } from '../upstream-request.js';

export interface ArkError {
  readonly code: string;
  readonly message: string;
}

/**
 * Codes that refuse the request's content: Ark's content moderation (`*SensitiveContentDetected*`, and
 * Volcengine's content-security `*RiskDetection`), and the task-type check that reads the prompt as a
 * video edit and then refuses the requested ratio and duration (`InvalidParameter.TaskTypeConstraint`).
 */
const REFUSAL_CODES = /SensitiveContentDetected|RiskDetection|TaskTypeConstraint/;

export function isRefusal(code: string): boolean {
  return REFUSAL_CODES.test(code);
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** The `error` of an answer or of a failed task, if it has one with a code. */
export function arkErrorOf(value: unknown): ArkError | undefined {
  const error = asRecord(value);
  const code = error?.code;
  if (typeof code !== 'string' || code === '') return undefined;
  const message = typeof error?.message === 'string' ? error.message.trim() : '';
  return { code, message };
}

export function describeArkError(error: ArkError): string {
  return error.message ? `${error.code}: ${error.message}` : error.code;
}

/** The task failure for an error answer of HTTP `status` to the create request. */
export function createRefusal(label: string, status: number, error: ArkError): TaskFailure {
  if (isRefusal(error.code)) {
    return new TaskFailure(
      'upstream_refused',
      `${label}: Ark refused the request: ${describeArkError(error)}`,
    );
  }
  const what =
    status === 401 || status === 403
      ? 'Ark refused the API key'
      : status === 404
        ? 'Ark does not serve the model to this key'
        : 'Ark refused the request';
  return new TaskFailure('upstream_error', `${label}: ${what} (HTTP ${status}): ${describeArkError(error)}`);
}

/** The task id in the create answer, `{"id": "cgt-…"}`. */
export function createdTaskId(answer: unknown, label: string): string {
  const id = asRecord(answer)?.id;
  if (typeof id === 'string' && id !== '') return id;
  throw new TaskFailure(
    'upstream_error',
    `${label}: Ark answered the create request without a task id: ${excerptOf(answer)}`,
  );
}

/** What a succeeded task made: `content.video_url`, and `content.last_frame_url` when asked for (`return_last_frame`). */
export interface ArkResult {
  readonly video: string;
  readonly lastFrame?: string;
}

/** A task object (`GET /contents/generations/tasks/{id}`) as a hosted status; the result is its links. */
export function arkTaskStatus(answer: unknown, label: string): HostedStatus<ArkResult> {
  const task = asRecord(answer);
  const status = task?.status;
  switch (status) {
    case 'queued':
    case 'running':
      return { state: status };
    case 'succeeded': {
      const content = asRecord(task?.content);
      const video = content?.video_url;
      const lastFrame = content?.last_frame_url;
      if (typeof video !== 'string' || video === '') return { state: 'succeeded' };
      return {
        state: 'succeeded',
        result: { video, ...(typeof lastFrame === 'string' && lastFrame !== '' && { lastFrame }) },
      };
    }
    case 'failed': {
      const error = arkErrorOf(task?.error);
      return {
        state: 'failed',
        failure: error
          ? { refused: isRefusal(error.code), message: describeArkError(error) }
          : { refused: false, message: 'Ark failed the task without saying why' },
      };
    }
    case 'cancelled':
      return { state: 'cancelled', failure: { refused: false, message: 'the task was cancelled on Ark' } };
    case 'expired':
      return {
        state: 'failed',
        failure: { refused: false, message: 'the task expired on Ark before it finished (status expired)' },
      };
    default:
      throw new TaskFailure(
        'upstream_error',
        `${label}: Ark answered something that is not a task: ${excerptOf(answer)}`,
      );
  }
}

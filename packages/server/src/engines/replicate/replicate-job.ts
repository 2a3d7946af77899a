/**
 * Replicate's prediction object (`GET /v1/predictions/{id}`; replicate/replicate-python-beta
 * `types/prediction.py`, replicate-javascript `index.d.ts`, https://replicate.com/docs/topics/predictions/lifecycle)
 * read as a hosted task's status:
 *
 * - `starting` (queued or booting) → queued; `processing` → running; `succeeded` → its output;
 *   `failed` → its `error`; `canceled` (by someone, or its deadline ran out while running) and `aborted` (its
 *   deadline ran out before it started) → cancelled.
 * - Content moderation fails the prediction with an `error` such as "The input or output was flagged as
 *   sensitive. Please try again with different inputs. (E005)", and older API versions failed predictions
 *   whose input did not validate ("Prediction input failed validation: …"): both are refusals.
 * - There is no progress field: like the SDKs (replicate-python `Prediction.Progress.parse`, replicate-javascript
 *   `parseProgressFromLogs`), progress is the last tqdm bar in `logs` (`76%|██████   | 7568/10000 [00:33<00:10]`).
 * - `output` is whatever the model returns: a video model's is one URL, some return a list of URLs.
 */
import type { HostedStatus } from '../hosted/hosted-task.js';

export type PredictionStatus = 'starting' | 'processing' | 'succeeded' | 'failed' | 'canceled' | 'aborted';

const STATUSES: ReadonlySet<string> = new Set([
  'starting',
  'processing',
  'succeeded',
  'failed',
  'canceled',
  'aborted',
]);

export interface Prediction {
  readonly id: string;
  readonly status: PredictionStatus;
  readonly output: unknown;
  readonly error: string | undefined;
  readonly logs: string;
  /** `urls.get`, where given. */
  readonly getUrl: string | undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The prediction `value` is, or undefined when it is not one. */
export function parsePrediction(value: unknown): Prediction | undefined {
  if (!isRecord(value)) return undefined;
  const { id, status, output, error, logs, urls } = value;
  if (typeof id !== 'string' || id === '' || typeof status !== 'string' || !STATUSES.has(status)) {
    return undefined;
  }
  const get = isRecord(urls) ? urls.get : undefined;
  return {
    id,
    status: status as PredictionStatus,
    output,
    error:
      error === null || error === undefined
        ? undefined
        : typeof error === 'string'
          ? error
          : JSON.stringify(error),
    logs: typeof logs === 'string' ? logs : '',
    getUrl: typeof get === 'string' ? get : undefined,
  };
}

/** The SDKs' pattern, matched at the start of a line. */
const TQDM_LINE = /^\s*(\d+)%\s*\|.+?\|\s*(\d+)\/(\d+)/;

/**
 * The fraction the last tqdm bar in `logs` shows, as the SDKs read it (the percentage tqdm printed), or
 * undefined. Lines also end at `\r`, where tqdm redraws its bar, so that the newest redraw counts.
 */
export function logsProgress(logs: string): number | undefined {
  const lines = logs.split(/\r\n|\r|\n/);
  for (let i = lines.length - 1; i >= 0; i--) {
    const match = TQDM_LINE.exec(lines[i] as string);
    if (match) return Math.min(1, Number(match[1]) / 100);
  }
  return undefined;
}

const VIDEO_PATH = /\.(mp4|m4v|mov|webm|mkv|avi|gif)$/i;

/** The video in a prediction's `output`: the URL, or in a list the first URL of a video (else the first URL). */
export function outputVideoUrl(output: unknown): string | undefined {
  if (typeof output === 'string') return output === '' ? undefined : output;
  if (!Array.isArray(output)) return undefined;
  const urls = output.filter((item): item is string => typeof item === 'string' && item !== '');
  const isVideo = (url: string) => {
    try {
      return VIDEO_PATH.test(new URL(url).pathname);
    } catch {
      return false;
    }
  };
  return urls.find(isVideo) ?? urls[0];
}

/** Errors that mean Replicate refused the request's content or input, rather than failing to make it. */
const REFUSAL = /flagged as sensitive|\(E005\)|input failed validation/i;

/** The prediction as a hosted task's status; its result is the output video's URL. */
export function predictionState(prediction: Prediction): HostedStatus<string> {
  switch (prediction.status) {
    case 'starting':
      return { state: 'queued' };
    case 'processing': {
      const progress = logsProgress(prediction.logs);
      return progress === undefined ? { state: 'running' } : { state: 'running', progress };
    }
    case 'succeeded': {
      const result = outputVideoUrl(prediction.output);
      return result === undefined ? { state: 'succeeded' } : { state: 'succeeded', result };
    }
    case 'failed': {
      const message = prediction.error ?? 'the prediction failed without an error message';
      return { state: 'failed', failure: { refused: REFUSAL.test(message), message } };
    }
    case 'canceled':
      return {
        state: 'cancelled',
        failure: { refused: false, message: 'the prediction was canceled on Replicate' },
      };
    case 'aborted':
      return {
        state: 'cancelled',
        failure: { refused: false, message: 'the prediction was aborted on Replicate before it started' },
      };
  }
}

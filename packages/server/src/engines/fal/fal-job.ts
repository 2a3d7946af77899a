/**
 * A fal request's state as the queue and the model report it, read as a hosted task's status: IN_QUEUE is
 * queued, IN_PROGRESS running (fal reports no finer progress); once COMPLETED, what the model answered at the
 * response URL says how it ended: the video's URL in its output (Seedance's output is `{"video": {"url",
 * "content_type", …}, "seed"}`: fal-ai/fal-js `types/endpoints.ts` `ModifyOutput`, `File`), or why it failed.
 * Model errors (https://docs.fal.ai/errors) are 4xx, typically 422, `{"detail": [{loc, msg, type, …}]}` (legacy
 * apps: `detail` as a plain string); a content checker's refusal has `type: "content_policy_violation"` and is
 * not retryable. Request errors (https://fal.ai/docs/documentation/model-apis/request-errors) are `{"detail":
 * "…", "error_type": "runner_disconnected"}`.
 */
import type { HostedStatus } from '../hosted/hosted-task.js';
import { excerptOf } from '../upstream-request.js';
import type { FalAnswer, FalQueueStatus } from './fal-client.js';

const CONTENT_POLICY = 'content_policy_violation';
const MESSAGE_CHARS = 500;

type Failure = NonNullable<HostedStatus<string>['failure']>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function shortened(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > MESSAGE_CHARS ? `${line.slice(0, MESSAGE_CHARS)}…` : line;
}

/** The value at a dotted path (`video.url`, `videos.0.url`) in the model's output. */
function valueAt(output: unknown, path: string): unknown {
  let current = output;
  for (const key of path.split('.')) {
    if (Array.isArray(current) && /^\d+$/.test(key)) current = current[Number(key)];
    else if (isRecord(current)) current = current[key];
    else return undefined;
  }
  return current;
}

/** One entry of `detail`, said as `field: message [type]`; the echoed `input` (a prompt, a data URL) is left out. */
function describeItem(item: unknown): { text: string; type?: string } {
  if (!isRecord(item)) return { text: String(item) };
  const loc = Array.isArray(item.loc) ? item.loc.filter((part, i) => !(i === 0 && part === 'body')) : [];
  const where = loc.length > 0 ? `${loc.join('.')}: ` : '';
  const type = typeof item.type === 'string' ? item.type : undefined;
  const categories = Array.isArray(item.categories) ? ` (${item.categories.join(', ')})` : '';
  const msg = typeof item.msg === 'string' ? item.msg : JSON.stringify(item);
  return { text: `${where}${msg}${type ? ` [${type}${categories}]` : ''}`, type };
}

/** Why the model's error answer failed the request; a content checker's refusal is `refused`. */
function falFailure(status: number, body: string): Failure {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return {
      refused: false,
      message: `the model answered HTTP ${status}: ${excerptOf(body) || 'no reason given'}`,
    };
  }
  const detail = isRecord(parsed) ? parsed.detail : undefined;
  if (Array.isArray(detail) && detail.length > 0) {
    const items = detail.map(describeItem);
    const text = shortened(items.map((item) => item.text).join('; '));
    if (items.some((item) => item.type === CONTENT_POLICY)) {
      return { refused: true, message: `fal's content checker refused the request: ${text}` };
    }
    return { refused: false, message: `the model answered HTTP ${status}: ${text}` };
  }
  const errorType =
    isRecord(parsed) && typeof parsed.error_type === 'string' ? ` (${parsed.error_type})` : '';
  const text = typeof detail === 'string' ? detail : JSON.stringify(parsed);
  return { refused: false, message: `the model answered HTTP ${status}${errorType}: ${shortened(text)}` };
}

/** A request the queue still has: IN_QUEUE queued, IN_PROGRESS running. */
export function falQueueState(status: Exclude<FalQueueStatus, 'COMPLETED'>): HostedStatus<string> {
  return { state: status === 'IN_QUEUE' ? 'queued' : 'running' };
}

/** How a COMPLETED request ended: the video's URL at `resultPath` in the model's output, or why it failed. */
export function falOutcome(answer: FalAnswer, resultPath: string): HostedStatus<string> {
  if (!answer.ok) return { state: 'failed', failure: falFailure(answer.status, answer.body) };
  const url = valueAt(answer.output, resultPath);
  if (typeof url === 'string' && /^https?:\/\//i.test(url)) return { state: 'succeeded', result: url };
  return {
    state: 'failed',
    failure: {
      refused: false,
      message: `the model's output has no video URL at ${resultPath}: ${excerptOf(answer.output)}`,
    },
  };
}

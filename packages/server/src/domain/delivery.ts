/**
 * Callback deliveries (docs/decisions.md#callbacks): which status changes cause one, what each carries, and
 * the shape the delivery log shows. A delivery is one message with a stable `webhook-id`; it is attempted
 * until a 2xx, a 410 or the end of the retry schedule.
 */
import { newId } from './identifiers.js';
import { isFinal, type PublicTask, type TaskRecord, type TaskStatus, toPublicTask } from './task.js';
import { estimatedSeconds, type TaskInfoContext, usageWithCurrency } from './task-info.js';
import { unixSeconds } from './unix-seconds.js';

export type DeliveryEvent = `task.${TaskStatus}`;
export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** What one attempt came to: an HTTP status, or an error when no status arrived. */
export interface DeliveryAttempt {
  readonly number: number;
  /** Epoch milliseconds. */
  readonly attemptedAt: number;
  readonly durationMs: number;
  readonly httpStatus: number | null;
  readonly error: string | null;
}

export interface NewDelivery {
  /** The `webhook-id`: `msg_` and 24 base62 characters. */
  readonly id: string;
  readonly taskId: string;
  readonly accountId: string;
  readonly event: DeliveryEvent;
  readonly url: string;
  /** `host[:port]` of `url`, lower case: the unit of per-receiver concurrency. */
  readonly host: string;
  /** The task object at the status change, without `results` (links are signed when sent). */
  readonly payload: PublicTask;
}

export interface DeliveryRecord extends NewDelivery {
  readonly status: DeliveryStatus;
  /** Attempts started, including one in flight; also the fencing token of the current claim. */
  readonly attemptCount: number;
  /** Epoch milliseconds; while an attempt is in flight, when its claim runs out. */
  readonly nextAttemptAt: number | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface DeliveryWithAttempts extends DeliveryRecord {
  readonly attempts: readonly DeliveryAttempt[];
}

/** A delivery of `task` as it is now, or undefined when the task has no `callback_url`. */
export function deliveryFor(task: TaskRecord): NewDelivery | undefined {
  const url = task.params.callback_url;
  if (!url) return undefined;
  return {
    id: newId('msg'),
    taskId: task.id,
    accountId: task.accountId,
    event: `task.${task.status}`,
    url,
    host: new URL(url).host.toLowerCase(),
    payload: toPublicTask(task, undefined),
  };
}

/** A snapshot as stored: those stored before the task object had `task_info` and `usage` lack them. */
export type StoredSnapshot = Omit<PublicTask, 'task_info' | 'usage'> &
  Partial<Pick<PublicTask, 'task_info' | 'usage'>>;

/** A stored snapshot with `task_info` and `usage`, made from its own fields when it has none (no cost then). */
export function fromStoredSnapshot(stored: StoredSnapshot): PublicTask {
  const { task_info, usage } = stored;
  if (task_info !== undefined && usage !== undefined) return { ...stored, task_info, usage };
  return {
    ...stored,
    task_info: task_info ?? { can_cancel: !isFinal(stored.status), video_duration: stored.duration },
    usage: usage ?? { video_seconds: stored.status === 'failed' ? 0 : stored.duration },
  };
}

/**
 * The body sent: the snapshot, with the result links (signed now) when the task had completed (the video's, and
 * its last frame's when the request asked for it), and what
 * presenting it knows now (task-info.ts): the prices' currency of its cost, and, while it was live, the seconds
 * its model's recent runs say are left.
 */
export function deliveryBody(
  payload: PublicTask,
  resultUrl: string | undefined,
  lastFrameUrl?: string,
  context: TaskInfoContext = {},
): PublicTask {
  const estimate = estimatedSeconds(payload.status, payload.progress, context.typicalRunMs);
  const body: PublicTask = {
    ...payload,
    task_info: {
      ...payload.task_info,
      ...(estimate === undefined ? {} : { estimated_time: estimate }),
    },
    usage: usageWithCurrency(payload.usage, context.currency),
  };
  if (payload.status !== 'completed' || !resultUrl) return body;
  return { ...body, results: lastFrameUrl ? [resultUrl, lastFrameUrl] : [resultUrl] };
}

/** A delivery as `GET /v1/tasks/{id}/deliveries` shows it. */
export interface PublicDelivery {
  id: string;
  object: 'webhook.delivery';
  task_id: string;
  event: DeliveryEvent;
  url: string;
  status: DeliveryStatus;
  created_at: number;
  /** Unix seconds of the next attempt, while pending. */
  next_attempt_at?: number;
  attempts: {
    attempted_at: number;
    duration_ms: number;
    http_status?: number;
    error?: string;
  }[];
}

export function toPublicDelivery(delivery: DeliveryWithAttempts): PublicDelivery {
  const out: PublicDelivery = {
    id: delivery.id,
    object: 'webhook.delivery',
    task_id: delivery.taskId,
    event: delivery.event,
    url: delivery.url,
    status: delivery.status,
    created_at: unixSeconds(delivery.createdAt),
    attempts: delivery.attempts.map((attempt) => ({
      attempted_at: unixSeconds(attempt.attemptedAt),
      duration_ms: attempt.durationMs,
      ...(attempt.httpStatus === null ? {} : { http_status: attempt.httpStatus }),
      ...(attempt.error === null ? {} : { error: attempt.error }),
    })),
  };
  if (delivery.status === 'pending' && delivery.nextAttemptAt !== null) {
    out.next_attempt_at = unixSeconds(delivery.nextAttemptAt);
  }
  return out;
}

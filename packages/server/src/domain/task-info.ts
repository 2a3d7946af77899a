/**
 * What the task object shows besides the interface's own fields, as the aggregator this interface comes from
 * shows it on its tasks (its public documentation of `GET /v1/tasks/{task_id}` and of its Seedance 2.0 routes:
 * `"task_info": { "can_cancel": true, "estimated_time": 165, "video_duration": 8 }`, then `{ "can_cancel": false }`
 * once final): `task_info`, and `usage`, which there counts the aggregator's credits and here the task's
 * seconds of video and cost, as `GET /v1/usage` counts them (docs/api.md#task_info-and-usage).
 */
import { fromMicros } from './prices.js';
import type { TaskStatus } from './task.js';

export interface TaskInfo {
  /** Whether `POST /v1/tasks/{id}/cancel` would succeed now: pending or processing. */
  can_cancel: boolean;
  /**
   * Whole seconds until the task is likely done, from its model's recent run times (claim to completion) and its
   * progress; only while it is pending or processing, and only when the model completed tasks recently.
   */
  estimated_time?: number;
  /** The requested length of the video, in seconds (the task's `duration`). */
  video_duration: number;
}

export interface TaskUsage {
  /** Seconds of video the task uses: its duration, reserved until it completes; 0 once failed (nothing is used). */
  video_seconds: number;
  /** In `currency`: its price at creation times `video_seconds`; only when prices are configured and cover it. */
  cost?: number;
  currency?: string;
}

/** What presenting a task knows besides the task. */
export interface TaskInfoContext {
  /** The prices' currency when prices are configured (domain/prices.ts). */
  readonly currency?: string | undefined;
  /** Milliseconds a run of the task's model typically takes, claim to completion (tasks/run-time-estimates.ts). */
  readonly typicalRunMs?: number | undefined;
}

/** The facts of a task these are made from. */
interface TaskFacts {
  readonly status: TaskStatus;
  readonly progress: number;
  readonly params: { readonly duration: number };
  readonly costMicros: number | null;
}

const isLive = (status: TaskStatus): boolean => status === 'pending' || status === 'processing';

/**
 * Seconds left of a live task: the model's typical run scaled by the progress still to make (a pending task has
 * the whole run ahead; the wait in the queue is not counted), at least 1. Undefined when final or unknown.
 */
export function estimatedSeconds(
  status: TaskStatus,
  progress: number,
  typicalRunMs: number | undefined,
): number | undefined {
  if (!isLive(status) || typicalRunMs === undefined) return undefined;
  return Math.max(1, Math.ceil(((typicalRunMs / 1000) * (100 - progress)) / 100));
}

export function taskInfo(task: TaskFacts, context: TaskInfoContext): TaskInfo {
  const estimate = estimatedSeconds(task.status, task.progress, context.typicalRunMs);
  return {
    can_cancel: isLive(task.status),
    ...(estimate === undefined ? {} : { estimated_time: estimate }),
    video_duration: task.params.duration,
  };
}

/**
 * What the task uses, as its usage record says: the duration and the cost reserved at creation while it runs
 * and once completed (settled), nothing once failed (the reservation is released). Without `context` (a
 * callback's stored snapshot), `cost` is kept without a currency, for `usageWithCurrency` to finish when sent.
 */
export function taskUsage(task: TaskFacts, context: TaskInfoContext | undefined): TaskUsage {
  const failed = task.status === 'failed';
  const usage: TaskUsage = { video_seconds: failed ? 0 : task.params.duration };
  if (task.costMicros === null) return usage;
  const cost = failed ? 0 : fromMicros(task.costMicros);
  if (context === undefined) return { ...usage, cost };
  return context.currency === undefined ? usage : { ...usage, cost, currency: context.currency };
}

/** A snapshot's usage (`taskUsage` without context) as presented with `currency` (undefined: no prices now). */
export function usageWithCurrency(usage: TaskUsage, currency: string | undefined): TaskUsage {
  if (usage.cost === undefined) return usage;
  if (currency === undefined) return { video_seconds: usage.video_seconds };
  return { ...usage, currency };
}

/** The task: its statuses, the transitions between them, and the public shape clients see. */
import type { TaskErrorCode } from './errors.js';
import type { AspectRatio, Quality } from './frame-size.js';
import type { GenerationParams } from './generation-request.js';
import type { ModelId } from './models.js';
import { type TaskInfo, type TaskInfoContext, type TaskUsage, taskInfo, taskUsage } from './task-info.js';
import { unixSeconds } from './unix-seconds.js';
import type { UpstreamJob } from './upstream-job.js';

export const TASK_STATUSES = ['pending', 'processing', 'completed', 'failed'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export const FINAL_STATUSES: ReadonlySet<TaskStatus> = new Set(['completed', 'failed']);

const TRANSITIONS: Record<TaskStatus, readonly TaskStatus[]> = {
  pending: ['processing', 'failed'],
  // processing -> pending: a lease that expired or was released hands the task back to the queue.
  processing: ['pending', 'completed', 'failed'],
  completed: [],
  failed: [],
};

export function canTransition(from: TaskStatus, to: TaskStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

export function isFinal(status: TaskStatus): boolean {
  return FINAL_STATUSES.has(status);
}

export type Environment = 'development' | 'production';
export const ENVIRONMENTS: readonly Environment[] = ['development', 'production'];

export interface TaskError {
  readonly code: TaskErrorCode;
  readonly message: string;
}

/** Which account and environment may see a task. */
export interface TaskScope {
  readonly accountId: string;
  readonly environment: Environment;
}

export interface TaskRecord extends TaskScope {
  readonly id: string;
  readonly model: ModelId;
  readonly status: TaskStatus;
  /** 0..100, never decreasing; 100 only when completed. */
  readonly progress: number;
  /**
   * From 1, raised by one at every write of `status` or `progress` (a claim, progress, a hand-back, the end):
   * it only grows, and numbers the task's states alike in every process (the ids of its event stream).
   */
  readonly revision: number;
  readonly params: GenerationParams;
  readonly error: TaskError | null;
  /** Storage key of the result video, once completed. */
  readonly resultKey: string | null;
  /** Times the task has been claimed; also the fencing token of the current claim. */
  readonly attempts: number;
  readonly leaseOwner: string | null;
  /** Epoch milliseconds. */
  readonly leaseExpiresAt: number | null;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly completedAt: number | null;
  /** The engine (its name in the engines file) the task runs or last ran on; null until claimed. */
  readonly engine: string | null;
  /** The job its remote engine's upstream accepted, which the next run resumes; null until one did. */
  readonly upstreamJob: UpstreamJob | null;
  /** Epoch milliseconds: when its current (or last) run was claimed; null until claimed. */
  readonly startedAt: number | null;
  /** Micro-units: what its usage record reserved at creation (domain/prices.ts); null without a price. */
  readonly costMicros: number | null;
}

/** The task object of docs/decisions.md#task-object, as `GET /v1/tasks/{id}` returns it. */
export interface PublicTask {
  id: string;
  object: 'video.generation.task';
  model: ModelId;
  status: TaskStatus;
  progress: number;
  created_at: number;
  updated_at: number;
  completed_at?: number;
  duration: number;
  quality: Quality;
  aspect_ratio: AspectRatio;
  seed: number;
  /** Whether `results[1]` is the video's last frame (the request's `return_last_frame`). */
  return_last_frame: boolean;
  /** Whether the model makes a soundtrack of its own (the request's, or what its route can do). */
  generate_audio: boolean;
  results?: string[];
  error?: TaskError;
  task_info: TaskInfo;
  usage: TaskUsage;
}

/**
 * The task as clients see it. `resultUrl`: the link to the video, `lastFrameUrl` to its last frame (with
 * `return_last_frame`), for a completed task. `context` brings what the record alone does not know (task-info.ts); without it
 * (a callback's snapshot, stored at the status change), `task_info` has no `estimated_time` and `usage` a `cost`
 * without its currency, which the body sent adds (delivery.ts, `deliveryBody`).
 */
export function toPublicTask(
  task: TaskRecord,
  resultUrl: string | undefined,
  lastFrameUrl?: string,
  context?: TaskInfoContext,
): PublicTask {
  const out: PublicTask = {
    id: task.id,
    object: 'video.generation.task',
    model: task.model,
    status: task.status,
    progress: task.progress,
    created_at: unixSeconds(task.createdAt),
    updated_at: unixSeconds(task.updatedAt),
    duration: task.params.duration,
    quality: task.params.quality,
    aspect_ratio: task.params.aspect_ratio,
    seed: task.params.seed,
    return_last_frame: task.params.return_last_frame ?? false,
    generate_audio: task.params.generate_audio,
    task_info: taskInfo(task, context ?? {}),
    usage: taskUsage(task, context),
  };
  if (task.completedAt !== null) out.completed_at = unixSeconds(task.completedAt);
  if (task.status === 'completed' && resultUrl) {
    out.results = lastFrameUrl ? [resultUrl, lastFrameUrl] : [resultUrl];
  }
  if (task.status === 'failed' && task.error) out.error = task.error;
  return out;
}

/** Progress a running task may report: whole percent, capped below 100 until it completes. */
export function runningProgress(fraction: number): number {
  return Math.max(0, Math.min(99, Math.floor(fraction * 100)));
}

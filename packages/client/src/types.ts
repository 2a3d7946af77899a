/**
 * The objects the API answers: tasks (discriminated by `status`), pages of tasks, files, deletions, callback
 * deliveries and models.
 */
import type { AspectRatio, ModelId, ModeOf, Quality } from './models.js';

export const TASK_STATUSES = ['pending', 'processing', 'completed', 'failed'] as const;
/** `pending` (queued) → `processing` (rendering) → `completed` or `failed`, the two final ones. */
export type TaskStatus = (typeof TASK_STATUSES)[number];
export type FinalTaskStatus = 'completed' | 'failed';

export const TASK_ERROR_CODES = [
  'cancelled',
  'expired',
  'asset_fetch_failed',
  'invalid_asset',
  'generation_failed',
  'upstream_error',
  'upstream_unavailable',
  'upstream_refused',
  'timeout',
  'storage_full',
  'worker_lost',
  'internal_error',
] as const;
/** Why a task failed; a server may add codes, so unknown strings are possible too. */
export type TaskErrorCode = (typeof TASK_ERROR_CODES)[number] | (string & {});

export interface TaskError {
  readonly code: TaskErrorCode;
  /** Names the field and index where there is one: `image_urls[1]: HTTP 404`. */
  readonly message: string;
}

interface TaskFields<M extends ModelId> {
  /** `task-unified-…`. */
  readonly id: string;
  readonly object: 'video.generation.task';
  readonly model: M;
  /** Whole percent, never decreasing; 100 only when completed. */
  readonly progress: number;
  /** Unix seconds. */
  readonly created_at: number;
  /** Unix seconds. */
  readonly updated_at: number;
  /** The resolved parameters, defaults applied. */
  /** Seconds. */
  readonly duration: number;
  readonly quality: Quality;
  readonly aspect_ratio: AspectRatio;
  readonly seed: number;
  /** Whether `results[1]` is the video's last frame (the request's `return_last_frame`). */
  readonly return_last_frame: boolean;
  /** The requested value, or when it was left out whether the model's engines make sound. */
  readonly generate_audio: boolean;
  readonly task_info: TaskInfo;
  readonly usage: TaskUsage;
}

/** What the task allows and how long it is likely to take. */
export interface TaskInfo {
  /** Whether a cancel would succeed now: while pending or processing. */
  readonly can_cancel: boolean;
  /**
   * Whole seconds until the task is likely done, from its model's recent run times and its progress (the wait in
   * the queue not counted); only while pending or processing, and only when the model completed tasks recently.
   */
  readonly estimated_time?: number;
  /** The requested length of the video, in seconds. */
  readonly video_duration: number;
}

/** What the task uses, as `GET /v1/usage` counts it. */
export interface TaskUsage {
  /** Its duration (reserved until it completes, then used); 0 once failed. */
  readonly video_seconds: number;
  /** In `currency`: its price at creation for its seconds; 0 once failed; only when the server has prices for it. */
  readonly cost?: number;
  readonly currency?: string;
}

export interface PendingTask<M extends ModelId = ModelId> extends TaskFields<M> {
  readonly status: 'pending';
}

export interface ProcessingTask<M extends ModelId = ModelId> extends TaskFields<M> {
  readonly status: 'processing';
}

export interface CompletedTask<M extends ModelId = ModelId> extends TaskFields<M> {
  readonly status: 'completed';
  /** Unix seconds. */
  readonly completed_at: number;
  /**
   * `results[0]` is a signed, expiring link to the MP4 (no API key needed to fetch it); with
   * `return_last_frame`, `results[1]` one to its last frame, a PNG of the video's size.
   */
  readonly results: readonly [video: string, ...more: string[]];
}

export interface FailedTask<M extends ModelId = ModelId> extends TaskFields<M> {
  readonly status: 'failed';
  /** Unix seconds. */
  readonly completed_at: number;
  readonly error: TaskError;
}

/** A video generation task; narrow it on `status` to reach `results` or `error`. */
export type Task<M extends ModelId = ModelId> =
  | PendingTask<M>
  | ProcessingTask<M>
  | CompletedTask<M>
  | FailedTask<M>;
export type FinalTask<M extends ModelId = ModelId> = CompletedTask<M> | FailedTask<M>;

export function isFinal<M extends ModelId>(task: Task<M>): task is FinalTask<M> {
  return task.status === 'completed' || task.status === 'failed';
}

/** One page of `GET /v1/tasks`, newest first. */
export interface TaskPage {
  readonly object: 'list';
  readonly data: readonly Task[];
  readonly has_more: boolean;
  /** The `after` of the next page; `null` on the last page. */
  readonly next_cursor: string | null;
}

export interface ListTasksParams {
  /** Tasks per page, 1 to 100 (20 by default). */
  readonly limit?: number;
  /** The `next_cursor` of a previous page: start after it. */
  readonly after?: string;
  readonly status?: TaskStatus;
  readonly model?: ModelId;
  /** Unix seconds, inclusive. */
  readonly created_after?: number;
  /** Unix seconds, exclusive. */
  readonly created_before?: number;
}

export interface DeletedTask {
  readonly id: string;
  readonly object: 'video.generation.task';
  readonly deleted: true;
}

export type FileKind = 'image' | 'video' | 'audio';

/** An uploaded file: put `url` in the request field of its `kind` (`image_urls`, `video_urls`, `audio_urls`). */
export interface UploadedFile {
  /** `file-…`. */
  readonly id: string;
  readonly object: 'file';
  /** Recognised from the content, not from the name. */
  readonly kind: FileKind;
  readonly content_type: string;
  readonly filename: string;
  readonly bytes: number;
  /** Unix seconds. */
  readonly created_at: number;
  readonly url: string;
}

/** One callback message about a task (`GET /v1/tasks/{task_id}/deliveries`), with every attempt to send it. */
export interface Delivery {
  /** `msg_…`: the `webhook-id` the receiver gets. */
  readonly id: string;
  readonly object: 'webhook.delivery';
  readonly task_id: string;
  readonly event: `task.${TaskStatus}`;
  readonly url: string;
  readonly status: 'pending' | 'succeeded' | 'failed';
  /** Unix seconds. */
  readonly created_at: number;
  /** Unix seconds of the next attempt, while pending. */
  readonly next_attempt_at?: number;
  readonly attempts: readonly {
    readonly attempted_at: number;
    readonly duration_ms: number;
    readonly http_status?: number;
    readonly error?: string;
  }[];
}

/** How many files an asset field of a model takes. */
export interface AssetLimits {
  readonly min: number;
  readonly max: number;
}

/**
 * The asset fields a model takes as the server routes it, with how many of each: the catalogue narrowed by what
 * its engines can take. A field absent here is refused (`input_not_supported`); an image model whose `image_urls`
 * has `max` 1 takes a first frame but no last frame.
 */
export interface ModelInputs {
  readonly image_urls?: AssetLimits;
  readonly video_urls?: AssetLimits;
  readonly audio_urls?: AssetLimits;
}

/** A model as the server serves it (`GET /v1/models`, `GET /v1/models/{model_id}`). */
export interface Model<M extends ModelId = ModelId> {
  readonly id: M;
  readonly object: 'model';
  /** Unix seconds. */
  readonly created: number;
  readonly owned_by: 'videogen';
  readonly mode: ModeOf<M>;
  /** A fast variant (`videogen-2.0-fast-…` of the built-in ones). */
  readonly fast: boolean;
  /** Other names a request may give the model; a task names it by its ID. */
  readonly aliases: readonly string[];
  readonly inputs: ModelInputs;
  /** Seconds. */
  readonly durations: readonly number[];
  readonly qualities: readonly Quality[];
  readonly aspect_ratios: readonly AspectRatio[];
  /** Whether every engine the model is routed to makes sound; when false, `generate_audio: true` is refused. */
  readonly generate_audio: boolean;
  /** Whether `web_search: true` is taken: a text model every engine of whose route can search the web. */
  readonly web_search: boolean;
  /** Whether the asset fields may hold `asset://<id>` ids: every engine of the route takes them (Ark). */
  readonly asset_ids: boolean;
  /**
   * Whether a task created now would be rendered: some worker serving the model is running, and some engine it
   * is routed to is not cut off by its circuit breaker. A task of an unavailable model is still accepted; it
   * waits until the model is available.
   */
  readonly available: boolean;
  /** Why not, when `available` is false. */
  readonly unavailable_reason?: string;
}

/** `GET /v1/models`: every model, in catalogue order. */
export interface ModelList {
  readonly object: 'list';
  readonly data: readonly Model[];
}

export type UsageGrouping = 'day' | 'model' | 'api_key';

/** `GET /v1/usage`: the range (Unix seconds, the current UTC month by default) and the grouping (`day` by default). */
export interface UsageParams {
  /** Unix seconds, inclusive. */
  readonly start?: number;
  /** Unix seconds, exclusive. */
  readonly end?: number;
  readonly group_by?: UsageGrouping;
}

export interface UsageFigures {
  readonly tasks: number;
  readonly video_seconds: number;
  /** In the report's `currency`; only when the server has prices configured. */
  readonly cost?: number;
}

export interface UsageBucket extends UsageFigures {
  readonly object: 'usage.bucket';
  /** The UTC day (`YYYY-MM-DD`), the model ID, or the API key id (null: tasks created from the dashboard). */
  readonly key: string | null;
  /** Tasks not finished yet: reserved against the monthly limits, not yet usage. */
  readonly reserved: UsageFigures;
}

/** Completed tasks' usage of the key's account and environment (failed and cancelled tasks cost nothing). */
export interface UsageReport {
  readonly object: 'list';
  readonly group_by: UsageGrouping;
  /** Unix seconds, inclusive. */
  readonly start: number;
  /** Unix seconds, exclusive. */
  readonly end: number;
  readonly currency?: string;
  readonly data: readonly UsageBucket[];
  readonly totals: UsageFigures & { readonly reserved: UsageFigures };
}

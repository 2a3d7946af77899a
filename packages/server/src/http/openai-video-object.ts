/**
 * A task as OpenAI's Video object (`VideoResource` of openai/openai-openapi; `Video` of openai-node
 * src/resources/videos.ts), and the schemas of the OpenAI Videos API's answers. The id is the task's own: the same
 * task answers on `/v1/tasks/{id}` and `/v1/videos/{id}`.
 */
import { type Static, Type } from '@sinclair/typebox';
import { type FixedAspectRatio, frameSize, resolveAspectRatio } from '../domain/frame-size.js';
import { remixSourceOf } from '../domain/storage-keys.js';
import type { TaskRecord, TaskStatus } from '../domain/task.js';
import { unixSeconds } from '../domain/unix-seconds.js';

export const OPENAI_VIDEO_STATUSES = ['queued', 'in_progress', 'completed', 'failed'] as const;
export type OpenAiVideoStatus = (typeof OPENAI_VIDEO_STATUSES)[number];

const STATUS: Record<TaskStatus, OpenAiVideoStatus> = {
  pending: 'queued',
  processing: 'in_progress',
  completed: 'completed',
  failed: 'failed',
};

const StringEnum = <const T extends readonly string[]>(values: T, description?: string) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...(description ? { description } : {}) });

const Nullable = <T extends ReturnType<typeof Type.Integer> | ReturnType<typeof Type.String>>(
  schema: T,
  description: string,
) => Type.Union([schema, Type.Null()], { description });

export const OpenAiVideoSchema = Type.Object(
  {
    id: Type.String({
      description: 'The task’s id (`task-unified-…`): the same task is `GET /v1/tasks/{id}`.',
    }),
    object: StringEnum(['video']),
    model: Type.String({ description: 'The model ID of this service the task runs on.' }),
    status: StringEnum(
      OPENAI_VIDEO_STATUSES,
      'The task’s status: `pending` is `queued`, `processing` is `in_progress`.',
    ),
    progress: Type.Integer({ minimum: 0, maximum: 100 }),
    created_at: Type.Integer({ minimum: 0, description: 'Unix seconds.' }),
    completed_at: Nullable(
      Type.Integer({ minimum: 0 }),
      'Unix seconds the task completed or failed; null before.',
    ),
    expires_at: Nullable(
      Type.Integer({ minimum: 0 }),
      'Unix seconds the video is deleted (`VIDEOGEN_RETENTION_DAYS` after it completed); null before, for a failed ' +
        'task, or without retention.',
    ),
    prompt: Nullable(Type.String(), 'The prompt.'),
    size: Type.String({
      description:
        '`WIDTHxHEIGHT` of the video: the frame of the task’s quality and ratio (16:9 while an `adaptive` ratio is unresolved).',
    }),
    seconds: Type.String({ description: 'The duration, in seconds.' }),
    remixed_from_video_id: Nullable(
      Type.String(),
      'The video this one remixes (`POST /v1/videos/{id}/remix`).',
    ),
    error: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()], {
      description: 'Why the task failed: its `error` (codes of docs/api.md); null unless failed.',
    }),
  },
  { $id: 'OpenAIVideo', description: 'A task as OpenAI’s Video object.' },
);

export type OpenAiVideo = Static<typeof OpenAiVideoSchema>;

export const OpenAiVideoListSchema = Type.Object(
  {
    object: StringEnum(['list']),
    data: Type.Array(Type.Ref(OpenAiVideoSchema), { description: 'Newest first.' }),
    first_id: Nullable(Type.String(), 'The id of the first video of the page.'),
    last_id: Nullable(Type.String(), 'The id of the last video of the page: `after` for the next page.'),
    has_more: Type.Boolean(),
  },
  { description: 'A page of videos (OpenAI’s `VideoListResource`).' },
);

export type OpenAiVideoList = Omit<Static<typeof OpenAiVideoListSchema>, 'data'> & { data: OpenAiVideo[] };

export const DeletedOpenAiVideoSchema = Type.Object(
  {
    id: Type.String(),
    object: StringEnum(['video.deleted']),
    deleted: Type.Literal(true),
  },
  { description: 'The task, its video and its stored assets are gone.' },
);

/** The frame of a task, as `WIDTHxHEIGHT`. */
function sizeOf(task: TaskRecord): string {
  const ratio: FixedAspectRatio = resolveAspectRatio(task.params.aspect_ratio, undefined);
  const frame = frameSize(task.params.quality, ratio);
  return `${frame.width}x${frame.height}`;
}

/**
 * `retentionSeconds`: how long a completed task's video is kept (0: for ever), for `expires_at`.
 */
export function toOpenAiVideo(task: TaskRecord, retentionSeconds: number): OpenAiVideo {
  const completedAt = task.completedAt === null ? null : unixSeconds(task.completedAt);
  return {
    id: task.id,
    object: 'video',
    model: task.model,
    status: STATUS[task.status],
    progress: task.progress,
    created_at: unixSeconds(task.createdAt),
    completed_at: completedAt,
    expires_at:
      task.status === 'completed' && completedAt !== null && retentionSeconds > 0
        ? completedAt + retentionSeconds
        : null,
    prompt: task.params.prompt,
    size: sizeOf(task),
    seconds: String(task.params.duration),
    remixed_from_video_id: remixSourceOf(task),
    error:
      task.status === 'failed' && task.error ? { code: task.error.code, message: task.error.message } : null,
  };
}

/**
 * The video object of OpenAI's Videos API, as `POST /v1/videos` and `GET /v1/videos/{id}` answer it, read as a
 * hosted task's status: `queued`, `in_progress` with `progress` 0..100 where the server reports it, `completed`
 * (its content is downloaded by the video's id) or `failed` with its `error`.
 */
import type { HostedStatus } from '../hosted/hosted-task.js';

export const VIDEO_STATUSES = ['queued', 'in_progress', 'completed', 'failed'] as const;
export type VideoStatus = (typeof VIDEO_STATUSES)[number];

export interface VideoObject {
  readonly id: string;
  readonly status: VideoStatus;
  /** 0..100; absent on servers that do not report it. */
  readonly progress?: number;
  readonly error?: { readonly code?: string; readonly message?: string };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isStatus(value: unknown): value is VideoStatus {
  return typeof value === 'string' && (VIDEO_STATUSES as readonly string[]).includes(value);
}

/**
 * `value` as a video object, or undefined when it is not one. Servers differ in what else they send, so
 * only `id` and a known `status` are required (and `object`, when present, must say `video`).
 */
export function parseVideoObject(value: unknown): VideoObject | undefined {
  if (!isRecord(value)) return undefined;
  const { id, status, progress, error } = value;
  if (typeof id !== 'string' || id === '' || !isStatus(status)) return undefined;
  if (value.object !== undefined && value.object !== 'video') return undefined;
  const video: { -readonly [K in keyof VideoObject]: VideoObject[K] } = { id, status };
  if (typeof progress === 'number' && Number.isFinite(progress)) video.progress = progress;
  if (isRecord(error)) {
    video.error = {
      code: typeof error.code === 'string' ? error.code : undefined,
      message: typeof error.message === 'string' ? error.message : undefined,
    };
  }
  return video;
}

/** The video as a hosted status; the result is its id, which its content is downloaded by. */
export function openAiStatus(video: VideoObject): HostedStatus<string> {
  const progress = video.progress === undefined ? {} : { progress: video.progress / 100 };
  switch (video.status) {
    case 'completed':
      return { state: 'succeeded', result: video.id };
    case 'failed': {
      const reason = video.error?.message ?? video.error?.code ?? 'no reason given';
      return {
        state: 'failed',
        failure: { refused: false, message: `the server failed the video: ${reason}` },
      };
    }
    case 'in_progress':
      return { state: 'running', ...progress };
    default:
      return { state: 'queued', ...progress };
  }
}

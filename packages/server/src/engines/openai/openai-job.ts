/** The video object of OpenAI's Videos API, as `POST /v1/videos` and `GET /v1/videos/{id}` answer it. */

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

/**
 * Where everything lives in storage, the one layout every module reads and writes by:
 *
 *   results/<task id>.mp4               a completed task's video
 *   results/<task id>-last-frame.png    its last frame, when the request asked for it (`return_last_frame`)
 *   assets/<task id>/<field>-<index>    an inline (`data:`) asset of a task's request, stored at its creation
 *   assets/<task id>/remix-of-<id>.mp4  the video a remix (OpenAI Videos API) was made from, copied at its creation
 *   uploads/<file id>                   an uploaded file
 *
 * A task owns its video and its assets, which go with it; uploads are the account's, shared by every task that
 * refers to them, and expire on their own.
 */
import type { AssetField } from './models.js';

/** How a task's params refer to an object in storage, in place of a URL: `storage:<key>`. */
export const STORED_ASSET_SCHEME = 'storage:';

export function resultKey(taskId: string): string {
  return `results/${taskId}.mp4`;
}

/** The video's last frame, a PNG of its size (`return_last_frame`, `results[1]`). */
export function lastFrameKey(taskId: string): string {
  return `results/${taskId}-last-frame.png`;
}

export function inlineAssetKey(taskId: string, field: AssetField, index: number): string {
  return `assets/${taskId}/${field}-${index}`;
}

/** Whether `key` is one of the task's inline assets (rather than an upload it refers to). */
export function isTaskAssetKey(key: string, taskId: string): boolean {
  return key.startsWith(`assets/${taskId}/`);
}

export function uploadKey(fileId: string): string {
  return `uploads/${fileId}`;
}

/** The file id of an upload's key; undefined for any other key. */
export function uploadIdOf(key: string): string | undefined {
  return key.startsWith('uploads/') ? key.slice('uploads/'.length) : undefined;
}

/** Where a remix keeps the video it was made from: the task's own copy, deleted with it. */
export function remixSourceKey(taskId: string, sourceTaskId: string): string {
  return `assets/${taskId}/remix-of-${sourceTaskId}.mp4`;
}

/** The id of the task a remix was made from (its first reference video is that task's copy); null for any other. */
export function remixSourceOf(task: {
  readonly id: string;
  readonly params: { readonly video_urls: readonly string[] };
}): string | null {
  const first = task.params.video_urls[0] ?? '';
  const prefix = `${STORED_ASSET_SCHEME}assets/${task.id}/remix-of-`;
  if (!first.startsWith(prefix) || !first.endsWith('.mp4')) return null;
  return first.slice(prefix.length, -'.mp4'.length);
}

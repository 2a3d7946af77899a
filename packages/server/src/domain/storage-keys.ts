/**
 * Where everything lives in storage, the one layout every module reads and writes by:
 *
 *   results/<task id>.mp4               a completed task's video
 *   assets/<task id>/<field>-<index>    an inline (`data:`) asset of a task's request, stored at its creation
 *   uploads/<file id>                   an uploaded file
 *
 * A task owns its video and its assets, which go with it; uploads are the account's, shared by every task that
 * refers to them, and expire on their own.
 */
import type { AssetField } from './models.js';

export function resultKey(taskId: string): string {
  return `results/${taskId}.mp4`;
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

/**
 * The objects a task owns in storage: its video, and the inline assets its request stored at creation
 * (`assets/<task id>/…`). Uploaded files (`uploads/…`) a request refers to are the account's, shared by every
 * task that uses them, and stay.
 */
import { storedAssetKey } from '../assets/stored-assets.js';
import type { TaskRecord } from '../domain/task.js';
import type { Storage } from '../ports/storage.js';
import { resultKey } from './result-links.js';

export function taskFileKeys(task: Pick<TaskRecord, 'id' | 'params'>): string[] {
  const { params } = task;
  const stored = [...params.image_urls, ...params.video_urls, ...params.audio_urls].flatMap((url) => {
    const key = storedAssetKey(url);
    return key?.startsWith(`assets/${task.id}/`) ? [key] : [];
  });
  return [resultKey(task.id), ...stored];
}

/** Deletes them; deleting an object that is not there is no error. */
export async function deleteTaskFiles(
  storage: Storage,
  task: Pick<TaskRecord, 'id' | 'params'>,
): Promise<void> {
  await Promise.all(taskFileKeys(task).map((key) => storage.delete(key)));
}

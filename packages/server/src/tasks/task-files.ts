/**
 * The objects a task owns in storage (domain/storage-keys.ts): its video, its last frame (`return_last_frame`),
 * and the inline assets its request
 * stored at creation. Uploaded files a request refers to are the account's, shared by every task that uses
 * them, and stay.
 */
import { storedAssetKey } from '../assets/stored-assets.js';
import { isTaskAssetKey, lastFrameKey, resultKey } from '../domain/storage-keys.js';
import type { TaskRecord } from '../domain/task.js';
import type { Storage } from '../ports/storage.js';

export function taskFileKeys(task: Pick<TaskRecord, 'id' | 'params'>): string[] {
  const { params } = task;
  const stored = [...params.image_urls, ...params.video_urls, ...params.audio_urls].flatMap((url) => {
    const key = storedAssetKey(url);
    return key && isTaskAssetKey(key, task.id) ? [key] : [];
  });
  const lastFrame = params.return_last_frame ? [lastFrameKey(task.id)] : [];
  return [resultKey(task.id), ...lastFrame, ...stored];
}

/** Deletes them; deleting an object that is not there is no error. */
export async function deleteTaskFiles(
  storage: Storage,
  task: Pick<TaskRecord, 'id' | 'params'>,
): Promise<void> {
  await Promise.all(taskFileKeys(task).map((key) => storage.delete(key)));
}

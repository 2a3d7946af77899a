/**
 * The video (and its last frame) a run stored but did not complete its task with: the task was cancelled or deleted while it was
 * stored, the run's lease was lost, or the completion's outcome is unknown. Left there, it would stay until
 * retention, owned by nothing.
 *
 * A result's key is the task's (domain/storage-keys.ts), not the run's: every run of a task writes the same key,
 * and the attempt number is no run's own either (a run handed back at shutdown gives its number back). So a run
 * may delete the object only when no run of the task can own it: the task is gone, or it failed, a final state
 * nothing leaves (a task completed with the key owns it, whichever run wrote the bytes; a pending or processing
 * one is another run's, which completes it with the key or ends it failed, and retention takes what is then left).
 */
import type { Logger } from 'pino';
import { lastFrameKey } from '../domain/storage-keys.js';
import type { TaskRecord } from '../domain/task.js';
import type { Storage } from '../ports/storage.js';
import type { TaskStore } from '../ports/store.js';

/**
 * Whether `task` owns the object at `key` (its video, or the video's last frame when the request asked for
 * it), or a run of it may yet make it its own.
 */
export function mayOwnResult(task: TaskRecord | undefined, key: string): boolean {
  if (!task || task.status === 'failed') return false;
  if (task.status !== 'completed') return true;
  return task.resultKey === key || (task.params.return_last_frame === true && key === lastFrameKey(task.id));
}

/** Deletes the object at `key`, stored by a run of `taskId`, unless the task owns it or may yet. */
export async function discardUnownedResult(
  taskId: string,
  key: string,
  deps: { readonly store: Pick<TaskStore, 'getTask'>; readonly storage: Storage; readonly logger: Logger },
): Promise<void> {
  try {
    if (mayOwnResult(await deps.store.getTask(taskId), key)) return;
    await deps.storage.delete(key);
    deps.logger.info({ key }, 'stored video removed: the task did not take it');
  } catch (error) {
    deps.logger.warn(
      { err: error, key },
      'could not remove a stored video the task did not take; retention will',
    );
  }
}

/**
 * Watching one task until it is final: what `Prefer: wait=N` waits on (at most 60 s). Event streams, which may
 * last much longer and be many, share one reader instead (task-watcher.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { isFinal, type TaskStatus } from '../domain/task.js';

/**
 * How often a watched task is read again. It is polled, not pushed: the worker that changes the task may run
 * in another process or on another machine, and its row in the store is the only truth all of them share
 * (progress is not announced on the WorkSignal, and a signal is a lossy hint anyway). One read by primary key
 * every 250 ms per watcher is cheap, and a client sees any change within a quarter of a second.
 */
export const WATCH_INTERVAL_MS = 250;

/** What a watch compares: a new snapshot is yielded when either changed. */
export interface TaskSnapshot {
  readonly status: TaskStatus;
  readonly progress: number;
}

export interface WatchOptions<T> {
  /** Ends the watch: the iterator returns (it does not throw) at its next step, sleeping or not. */
  readonly signal?: AbortSignal;
  /** The task as the caller just read it; read with `load` when absent. */
  readonly first?: T;
  readonly intervalMs?: number;
}

/**
 * The task's states as they change: the current one at once, then every state whose status or progress
 * differs from the last one yielded, read with `load` every `intervalMs`. Returns after yielding a final
 * status, or when `signal` fires. An error of `load` (the store failing, the task gone) is thrown to the
 * consumer.
 */
export async function* watchTask<T extends TaskSnapshot>(
  load: () => Promise<T>,
  options: WatchOptions<T> = {},
): AsyncGenerator<T, void, undefined> {
  const { signal, intervalMs = WATCH_INTERVAL_MS } = options;
  if (signal?.aborted) return;
  let last = options.first ?? (await load());
  yield last;
  while (!isFinal(last.status)) {
    try {
      await sleep(intervalMs, undefined, { signal });
    } catch (error) {
      if (signal?.aborted) return;
      throw error;
    }
    const next = await load();
    if (signal?.aborted) return;
    if (next.status !== last.status || next.progress !== last.progress) {
      last = next;
      yield next;
    }
  }
}

/**
 * WAL checkpoints off the event loop. SQLite's automatic checkpoint runs inside the commit that crosses
 * `wal_autocheckpoint` (1000 pages by default), on the committing connection: with better-sqlite3 that is the event
 * loop, and it copies the pages and fsyncs the database file while every request waits. Task creation commits a
 * few dozen pages, so one creation in a few dozen paid for a checkpoint. A worker thread with its own
 * connection now checkpoints every `intervalMs` instead; the store's connection keeps an automatic checkpoint
 * at a larger threshold as a backstop, should the worker fall behind or stop.
 *
 * Durability is unchanged: a commit is in the WAL when it returns either way, and a checkpoint only moves
 * committed pages into the database file.
 */
import { Worker } from 'node:worker_threads';

/** Pages the store's own connection lets the WAL reach before checkpointing itself (the backstop). */
export const BACKSTOP_CHECKPOINT_PAGES = 10_000;

export interface Checkpointer {
  close(): Promise<void>;
}

export function startCheckpointer(
  path: string,
  options: { intervalMs?: number; onError?: (message: string) => void } = {},
): Checkpointer {
  const worker = new Worker(new URL('./sqlite-checkpoint-worker.js', import.meta.url), {
    workerData: { path, intervalMs: options.intervalMs ?? 200 },
  });
  // The store must not keep the process alive, nor fail with it.
  worker.unref();
  worker.on('message', (message: { error?: string }) => {
    if (message.error) options.onError?.(message.error);
  });
  worker.on('error', (error) => options.onError?.(error.message));
  return {
    async close() {
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      // Kept alive while it closes, or the process could end with the store half closed.
      worker.ref();
      worker.postMessage('close');
      await exited;
    },
  };
}

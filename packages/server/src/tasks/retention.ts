/**
 * Retention: final tasks expire `VIDEOGEN_RETENTION_DAYS` after they ended, and uploaded files as long
 * after they were uploaded. A sweep deletes them in batches (rows first, in one transaction per batch, then
 * the objects), so an expired task is `task_not_found` and its video and stored assets are gone. Every API process sweeps; deleting what another process already deleted
 * is harmless.
 */
import type { Logger } from 'pino';
import { uploadKey } from '../domain/storage-keys.js';
import type { Storage } from '../ports/storage.js';
import type { FileStore, TaskStore } from '../ports/store.js';
import { deleteTaskFiles } from './task-files.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const BATCH = 100;
export const SWEEP_INTERVAL_MS = 60 * 60 * 1000;

export interface RetentionOptions {
  readonly store: Pick<TaskStore, 'deleteExpiredTasks'> & Pick<FileStore, 'deleteExpiredFiles'>;
  readonly storage: Storage;
  readonly logger: Logger;
  readonly retentionDays: number;
  readonly now?: () => number;
}

export class RetentionSweeper {
  readonly #options: RetentionOptions;
  #timer: NodeJS.Timeout | undefined;
  #sweeping: Promise<number> | undefined;

  constructor(options: RetentionOptions) {
    this.#options = options;
  }

  start(): void {
    const run = () =>
      void this.sweep().catch((error: unknown) =>
        this.#options.logger.error({ err: error }, 'retention sweep failed'),
      );
    run();
    this.#timer = setInterval(run, SWEEP_INTERVAL_MS);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#sweeping?.catch(() => 0);
  }

  /** Deletes every task and uploaded file that has expired by now; resolves with how many. One sweep at a time. */
  sweep(): Promise<number> {
    this.#sweeping ??= this.#sweepAll().finally(() => {
      this.#sweeping = undefined;
    });
    return this.#sweeping;
  }

  async #sweepAll(): Promise<number> {
    const { store, storage, logger, retentionDays } = this.#options;
    const now = this.#options.now?.() ?? Date.now();
    const before = now - retentionDays * DAY_MS;
    let tasks = 0;
    for (;;) {
      const expired = await store.deleteExpiredTasks(before, BATCH);
      await Promise.all(expired.map((task) => deleteTaskFiles(storage, task)));
      tasks += expired.length;
      if (expired.length < BATCH) break;
    }
    let files = 0;
    for (;;) {
      const expired = await store.deleteExpiredFiles(before, BATCH);
      await Promise.all(expired.map((file) => storage.delete(uploadKey(file.id))));
      files += expired.length;
      if (expired.length < BATCH) break;
    }
    if (tasks + files > 0)
      logger.info({ tasks, files, retention_days: retentionDays }, 'expired tasks and files deleted');
    return tasks + files;
  }
}

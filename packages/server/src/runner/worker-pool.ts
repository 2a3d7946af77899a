/**
 * The in-process worker pool: `concurrency` slots that claim pending tasks with a lease and run them.
 * Slots sleep until `notify()` (a task was created here) or the poll interval, so other processes'
 * tasks and expired leases are still picked up.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { settlesWithin } from '../settles-within.js';
import { type RunningTask, type RunTaskDependencies, runTask } from './run-task.js';

export interface WorkerPoolOptions extends RunTaskDependencies {
  readonly concurrency: number;
  readonly maxAttempts: number;
  /** Tasks of an account with this many processing stay pending until one ends; 0 or absent: no cap. */
  readonly maxActivePerAccount?: number;
  readonly pollIntervalMs?: number;
}

export class WorkerPool {
  readonly workerId = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  readonly #options: WorkerPoolOptions;
  readonly #running = new Set<RunningTask>();
  readonly #slots: Promise<void>[] = [];
  readonly #wake = new Set<() => void>();
  /** Counts `notify` calls, so a slot whose claim came back empty can tell it raced a new task and retry. */
  #notifications = 0;
  #stopping = false;
  #reaper: NodeJS.Timeout | undefined;
  /** The latest write of this pool's row in the store, awaited before the row is removed at stop. */
  #announcing: Promise<void> | undefined;

  constructor(options: WorkerPoolOptions) {
    this.#options = options;
  }

  start(): void {
    const { concurrency, store, maxAttempts, leaseMs, logger } = this.#options;
    for (let i = 0; i < concurrency; i++) this.#slots.push(this.#slot());
    const reap = () =>
      store.failAbandonedTasks(maxAttempts).then(
        (count) => {
          if (count === 0) return;
          logger.warn({ count }, 'tasks failed after their last lease expired');
          this.#options.metrics?.tasksAbandoned.inc(count);
          this.#options.onStatusChange?.();
        },
        (error: unknown) => logger.error({ err: error }, 'reaping abandoned tasks failed'),
      );
    const intervalMs = Math.max(1000, Math.floor(leaseMs / 2));
    // Three beats missed and the pool counts as gone: GET /v1/models no longer says its models can run.
    const announce = () =>
      store
        .registerWorker(this.workerId, this.#options.engines.models(), intervalMs * 3)
        .catch((error: unknown) => logger.warn({ err: error }, 'could not record this worker in the store'));
    const beat = () => {
      void reap();
      this.#announcing = announce();
    };
    beat();
    this.#reaper = setInterval(beat, intervalMs);
  }

  /**
   * A task may be waiting: wake one idle slot. Waking them all would send every idle slot to claim the same
   * task, and the losers' empty claims would queue ahead of the winner's writes on the store. A slot that
   * claims something wakes the next one in turn, so a burst of tasks still fills every slot.
   */
  notify(): void {
    this.#notifications++;
    const [wake] = this.#wake;
    wake?.();
  }

  /**
   * Some task may have been cancelled (here or in another process): stop every run whose task is no longer
   * processing under this pool's claim, so its slot takes the next task at once rather than when the
   * heartbeat would notice.
   */
  async checkCancellations(): Promise<void> {
    await Promise.all(
      [...this.#running].map(async (running) => {
        const task = await this.#options.store.getTask(running.taskId).catch(() => undefined);
        if (task && (task.status !== 'processing' || task.leaseOwner !== this.workerId))
          running.stop('cancelled');
      }),
    );
  }

  get activeTasks(): number {
    return this.#running.size;
  }

  /**
   * Stops claiming, lets running tasks finish for up to `graceMs`, then stops the rest and hands them back
   * to the queue so another worker (or this one after a restart) takes them at once.
   */
  async stop(graceMs: number): Promise<void> {
    this.#stopping = true;
    clearInterval(this.#reaper);
    for (const wake of [...this.#wake]) wake();
    const allDone = Promise.all(this.#slots);
    if (!(await settlesWithin(allDone, graceMs))) {
      for (const task of this.#running) task.stop('shutdown');
      await allDone;
    }
    await this.#announcing;
    await this.#options.store.removeWorker(this.workerId).catch(() => undefined);
  }

  async #slot(): Promise<void> {
    const { store, leaseMs, maxAttempts, engines, logger, pollIntervalMs = 1000 } = this.#options;
    const { maxActivePerAccount = 0 } = this.#options;
    while (!this.#stopping) {
      const notificationsBefore = this.#notifications;
      let task: Awaited<ReturnType<typeof store.claimTask>>;
      try {
        task = await store.claimTask({
          workerId: this.workerId,
          leaseMs,
          maxAttempts,
          models: engines.models(),
          routing: {
            routes: engines.routes(),
            maxConcurrency: engines.maxConcurrency(),
            circuit: engines.policy.circuit,
          },
          ...(maxActivePerAccount > 0 && { maxActivePerAccount }),
        });
      } catch (error) {
        logger.error({ err: error }, 'claiming a task failed');
        task = undefined;
      }
      if (!task) {
        if (this.#notifications === notificationsBefore) await this.#sleep(pollIntervalMs);
        continue;
      }
      this.#options.onStatusChange?.();
      // There may be more where this one came from.
      const [next] = this.#wake;
      next?.();
      if (this.#stopping) {
        // Claimed while shutdown began: hand it straight back rather than start a render nobody waits for.
        await store
          .releaseTask({ taskId: task.id, attempt: task.attempts, workerId: this.workerId })
          .catch(() => false);
        break;
      }
      const running = runTask(task, this.workerId, this.#options);
      this.#running.add(running);
      try {
        await running.done;
      } catch (error) {
        logger.error({ err: error, task_id: task.id }, 'task run ended with an error');
      } finally {
        this.#running.delete(running);
      }
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#wake.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#wake.add(done);
    });
  }
}

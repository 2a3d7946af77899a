/**
 * The in-process worker pool: `concurrency` slots that claim pending tasks with a lease and run them.
 * Slots sleep until `notify()` (a task was created here) or the poll interval, so other processes'
 * tasks and expired leases are still picked up. A run lets its slot go while a remote engine's upstream
 * works (machine-permits.ts): the slot claims the next task, and the run goes on beside the slots, taking a
 * slot again to fetch and conform its result; so one process follows any number of remote jobs.
 */

import type { ClaimStore, RoutingStore, TaskStore, WorkerLock, WorkerStore } from '../ports/store.js';
import { settlesWithin } from '../process/settles-within.js';
import { EndedJobCanceller } from './ended-job-canceller.js';
import { goneLocalWorkers, newWorkerId } from './gone-workers.js';
import { LeaseKeeper } from './lease-keeper.js';
import { MachineHold, MachinePermits } from './machine-permits.js';
import { OrphanJudge } from './orphan-judge.js';
import { RunDirectory } from './run-directory.js';
import { claimEndedFor } from './run-stopped.js';
import { type RunningTask, type RunTaskDependencies, runTask, scratchParent } from './run-task.js';

/** How often a pool looks for pools that died (PostgreSQL: their worker lock is gone). */
const ORPHAN_CHECK_MS = 2000;
/**
 * How long a pool's lock must stay missing before it counts as dead: longer than its lock's reconnection (a
 * second, then the connection) takes, so that a reset connection is not taken for a death.
 */
const ORPHAN_GRACE_MS = 5000;

export interface WorkerPoolOptions extends Omit<RunTaskDependencies, 'leases'> {
  readonly store: ClaimStore & RoutingStore & WorkerStore & Pick<TaskStore, 'getTask'>;
  readonly concurrency: number;
  readonly maxAttempts: number;
  /** Tasks of an account with this many processing stay pending until one ends; 0 or absent: no cap. */
  readonly maxActivePerAccount?: number;
  readonly pollIntervalMs?: number;
}

export class WorkerPool {
  readonly workerId = newWorkerId();
  readonly #options: WorkerPoolOptions & Pick<RunTaskDependencies, 'leases'>;
  /** Every run until it ends (some beside the slots, having let theirs go), with its end. */
  readonly #running = new Map<RunningTask, Promise<void>>();
  readonly #slots: Promise<void>[] = [];
  readonly #permits: MachinePermits;
  readonly #leases: LeaseKeeper;
  readonly #wake = new Set<() => void>();
  /** Counts `notify` calls, so a slot whose claim came back empty can tell it raced a new task and retry. */
  #notifications = 0;
  /** Notifications no claim has answered yet: about how many announced tasks may still be waiting. */
  #unanswered = 0;
  #stopping = false;
  #reaper: NodeJS.Timeout | undefined;
  /** The latest write of this pool's row in the store, awaited before the row is removed at stop. */
  #announcing: Promise<void> | undefined;
  #orphanCheck: NodeJS.Timeout | undefined;
  /** Taken before the pool registers or claims anything (`Store.holdWorkerLock`). */
  #ready: Promise<WorkerLock | undefined> | undefined;
  readonly #endedJobs: EndedJobCanceller;
  readonly #orphans = new OrphanJudge(ORPHAN_GRACE_MS, this.workerId);

  constructor(options: WorkerPoolOptions) {
    const endedJobs = new EndedJobCanceller(options);
    // A run that failed may leave its task's upstream job to cancel.
    const onTaskFailed = () => {
      options.onTaskFailed?.();
      endedJobs.trigger();
    };
    this.#leases = new LeaseKeeper({
      store: options.store,
      workerId: this.workerId,
      leaseMs: options.leaseMs,
      logger: options.logger,
    });
    this.#options = { ...options, onTaskFailed, leases: this.#leases };
    this.#endedJobs = endedJobs;
    this.#permits = new MachinePermits(options.concurrency);
  }

  start(): void {
    this.#ready = this.#prepare().catch((error: unknown) => {
      this.#options.logger.error({ err: error }, 'preparing the worker pool failed');
      return undefined;
    });
    const { concurrency } = this.#options;
    for (let i = 0; i < concurrency; i++) this.#slots.push(this.#slot());
  }

  /**
   * Before the first claim: take the worker lock, register, and requeue the tasks of pools that died (on this
   * machine: the process this one replaces; on PostgreSQL: any pool whose lock is gone). Then keep doing so:
   * the reaper fails tasks out of attempts, the beat renews the registration, the orphan check requeues.
   */
  async #prepare(): Promise<WorkerLock | undefined> {
    const { store, maxAttempts, leaseMs, logger } = this.#options;
    const lock = await store.holdWorkerLock(this.workerId).catch((error: unknown) => {
      // Without it the pool still works, unregistered (GET /v1/models does not count it), and its tasks wait
      // for their leases after a crash.
      logger.error({ err: error }, 'could not take the worker lock; this pool is not registered');
      return undefined;
    });
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
    // Registered only under the lock: on PostgreSQL a registered pool without it would be taken for dead.
    if (lock) {
      this.#announcing = announce();
      await this.#announcing;
    }
    const owners = await store.listLeaseOwners().catch(() => []);
    await this.#requeueOrphans(goneLocalWorkers(owners));
    void reap();
    this.#endedJobs.trigger();
    this.#reaper = setInterval(() => {
      void reap();
      // Tasks reaped, and cancelled in another process with none of this one's runs, end their jobs here.
      this.#endedJobs.trigger();
      if (lock) this.#announcing = announce();
    }, intervalMs);
    this.#orphanCheck = setInterval(() => void this.#requeueOrphans([]), ORPHAN_CHECK_MS);
    return lock;
  }

  async #requeueOrphans(goneLocal: readonly string[]): Promise<void> {
    const { store, logger } = this.#options;
    const lockless = await store.listLocklessWorkers().catch((error: unknown) => {
      logger.error({ err: error }, 'reading the worker locks failed');
      return [];
    });
    const goneWorkers = [...goneLocal, ...this.#orphans.dead(lockless)];
    if (goneWorkers.length === 0) return;
    const count = await store.requeueOrphanedTasks(goneWorkers).catch((error: unknown) => {
      logger.error({ err: error }, 'requeueing the tasks of gone workers failed');
      return 0;
    });
    if (count === 0) return;
    logger.warn({ count }, 'requeued the tasks of a worker that is gone');
    this.#options.metrics?.tasksRequeued.inc(count);
    this.notify();
  }

  /**
   * A task may be waiting: wake one idle slot. Waking them all would send every idle slot to claim the same
   * task, and the losers' empty claims would queue ahead of the winner's writes on the store. A slot that
   * claims something wakes the next one in turn, so a burst of tasks still fills every slot.
   */
  notify(): void {
    this.#notifications++;
    this.#unanswered++;
    const [wake] = this.#wake;
    wake?.();
  }

  /**
   * Some task may have been cancelled (here or in another process): stop every run whose task is no longer
   * processing under this pool's claim, so its slot takes the next task at once rather than when the
   * heartbeat would notice.
   */
  async checkCancellations(): Promise<void> {
    this.#endedJobs.trigger();
    await Promise.all(
      [...this.#running.keys()].map(async (running) => {
        const task = await this.#options.store.getTask(running.taskId).catch(() => undefined);
        if (task && (task.status !== 'processing' || task.leaseOwner !== this.workerId))
          running.stop(claimEndedFor(task));
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
    clearInterval(this.#orphanCheck);
    for (const wake of [...this.#wake]) wake();
    const allDone = Promise.all([...this.#slots, ...this.#running.values()]);
    if (!(await settlesWithin(allDone, graceMs))) {
      for (const task of this.#running.keys()) task.stop('shutdown');
      await allDone;
    }
    // Runs claimed after the list above was taken.
    while (this.#running.size > 0) await Promise.all([...this.#running.values()]);
    const lock = await this.#ready;
    clearInterval(this.#reaper);
    clearInterval(this.#orphanCheck);
    await this.#announcing;
    await this.#endedJobs.settle();
    await this.#options.store.removeWorker(this.workerId).catch(() => undefined);
    await lock?.release();
  }

  async #slot(): Promise<void> {
    await this.#ready;
    // The next run's directory, made while the slot claims and waits (run-directory.ts says why).
    let directory: Promise<RunDirectory> | undefined;
    try {
      while (!this.#stopping) {
        if (!directory) {
          directory = RunDirectory.make(scratchParent(this.#options));
          // A failure is handled where the directory is used: the claimed task's run, or the removal below.
          directory.catch(() => undefined);
        }
        if (await this.#claimAndRun(directory)) directory = undefined;
      }
    } finally {
      await (await directory?.catch(() => undefined))?.remove();
    }
  }

  /** Claims a task and runs it in `directory`; false when it claimed nothing and the directory is still unused. */
  async #claimAndRun(directory: Promise<RunDirectory>): Promise<boolean> {
    const { store, leaseMs, maxAttempts, engines, logger, pollIntervalMs = 1000 } = this.#options;
    const { maxActivePerAccount = 0 } = this.#options;
    const notificationsBefore = this.#notifications;
    await this.#permits.acquire();
    const machine = new MachineHold(this.#permits);
    if (this.#stopping) {
      machine.release();
      return false;
    }
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
      machine.release();
      if (this.#notifications === notificationsBefore) {
        this.#unanswered = 0;
        await this.#sleep(pollIntervalMs);
      }
      return false;
    }
    this.#options.onStatusChange?.(task);
    // There may be more where this one came from: a burst announced more tasks than have been claimed, or
    // this claim found work nobody announced (another process's, a backlog), which may not be alone. One
    // announced task is not followed by a claim that would find nothing, which (on SQLite's one connection)
    // would queue ahead of this task's next writes.
    const announced = this.#unanswered > 0;
    this.#unanswered = Math.max(0, this.#unanswered - 1);
    if (this.#unanswered > 0 || !announced) {
      const [next] = this.#wake;
      next?.();
    }
    if (this.#stopping) {
      machine.release();
      // Claimed while shutdown began: hand it straight back rather than start a render nobody waits for.
      await store
        .releaseTask({ taskId: task.id, attempt: task.attempts, workerId: this.workerId })
        .catch(() => false);
      return false;
    }
    // Made again now if making it ahead failed (the folder may be writable again).
    const made = directory.catch(() => RunDirectory.make(scratchParent(this.#options)));
    const running = runTask(task, this.workerId, this.#options, made, machine);
    const ended = running.done
      .catch((error: unknown) =>
        logger.error({ err: error, task_id: task.id }, 'task run ended with an error'),
      )
      .finally(() => this.#running.delete(running));
    this.#running.set(running, ended);
    // The slot is free again when the run ends, or when it lets the slot go while its upstream works.
    await Promise.race([ended, machine.freed]);
    return true;
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

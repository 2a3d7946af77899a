import type { TaskRecord } from '../domain/task.js';

/** Why a run was stopped from outside: the abort reason of the signal its engine renders under. */
export type StopReason = 'shutdown' | 'lease_lost' | 'timeout' | 'cancelled';

export class RunStopped extends Error {
  readonly reason: StopReason;
  constructor(reason: StopReason) {
    super(`run stopped: ${reason}`);
    this.name = 'RunStopped';
    this.reason = reason;
  }
}

/**
 * Why this run's claim ended, read from the task as it is now: the client cancelled it (or it is gone), or
 * another worker has it (the lease lapsed, or its worker was taken for dead), which will resume its job.
 */
export function claimEndedFor(task: TaskRecord | undefined): StopReason {
  if (!task) return 'cancelled';
  return task.status === 'failed' && task.error?.code === 'cancelled' ? 'cancelled' : 'lease_lost';
}

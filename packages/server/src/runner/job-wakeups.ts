/**
 * Which runs of this process follow which task's upstream job, so that a hint that the job changed (its
 * provider called back: the `polls` work signal, hinted with the task's id, from whichever API process took the
 * delivery) ends the run's pause before its next poll. A hint is only a hint: the poll it brings forward, never
 * the delivery, says what the job is, and a run woken for nothing polls once more and waits again.
 *
 * A wake that comes while the run is not pausing (its poll is in flight, or it is submitting) is kept for its
 * next pause, which then ends at once: the poll in flight may have been answered before the change.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { WakeablePause } from '../domain/wakeable-pause.js';

export interface FollowedJob {
  /** Waits `ms`, or less when the job is woken; rejects with the signal's reason when it aborts. */
  pause(ms: number, signal: AbortSignal): Promise<void>;
  /** The run no longer follows the job. */
  close(): void;
}

class Follower implements FollowedJob {
  readonly #pause = new WakeablePause();

  constructor(private readonly onClose: (follower: Follower) => void) {}

  wake(): void {
    this.#pause.wake();
  }

  pause(ms: number, signal: AbortSignal): Promise<void> {
    return this.#pause.pause((until) => sleep(ms, undefined, { signal: until }), signal);
  }

  close(): void {
    this.onClose(this);
  }
}

export class JobWakeups {
  readonly #followers = new Map<string, Set<Follower>>();

  /** The run of `taskId` follows its upstream job until it closes what this returns. */
  follow(taskId: string): FollowedJob {
    const follower = new Follower((closed) => {
      const set = this.#followers.get(taskId);
      set?.delete(closed);
      if (set?.size === 0) this.#followers.delete(taskId);
    });
    const set = this.#followers.get(taskId) ?? new Set<Follower>();
    set.add(follower);
    this.#followers.set(taskId, set);
    return follower;
  }

  /** Ends the pause of the runs following `taskId`'s job (or their next one); false when none does here. */
  wake(taskId: string): boolean {
    const set = this.#followers.get(taskId);
    if (!set) return false;
    for (const follower of set) follower.wake();
    return true;
  }

  /** Tasks followed now, for tests and gauges. */
  get size(): number {
    return this.#followers.size;
  }
}

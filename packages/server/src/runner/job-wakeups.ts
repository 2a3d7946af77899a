/**
 * Which runs of this process follow which task's upstream job, so that a hint that the job changed (its
 * provider called back: the `polls` work signal, hinted with the task's id, from whichever API process took the
 * delivery) ends the run's pause before its next poll. A hint is only a hint: the poll it brings forward, never
 * the delivery, says what the job is, and a run woken for nothing polls once more and waits again.
 *
 * A wake that comes while the run is not pausing (its poll is in flight, or it is submitting) is kept for its
 * next pause, which then ends at once: the poll in flight may have been answered before the change.
 */
export interface FollowedJob {
  /** Waits `ms`, or less when the job is woken; rejects with the signal's reason when it aborts. */
  pause(ms: number, signal: AbortSignal): Promise<void>;
  /** The run no longer follows the job. */
  close(): void;
}

// A timer and a listener rather than the remote-job base's pause (an AbortController and AbortSignal.any per
// pause, hosted/remote-job-engine.ts): sharing that one cost about 3 KB more a job held upstream
// (bench/remote-jobs.ts, 24.5 against 21.7 KB over four runs each).
class Follower implements FollowedJob {
  #woken = false;
  #resume: (() => void) | undefined;

  constructor(private readonly onClose: (follower: Follower) => void) {}

  wake(): void {
    if (this.#resume) this.#resume();
    else this.#woken = true;
  }

  pause(ms: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.#woken) {
      this.#woken = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const end = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', abort);
        this.#resume = undefined;
      };
      const abort = () => {
        end();
        reject(signal.reason);
      };
      const timer = setTimeout(() => {
        end();
        resolve();
      }, ms);
      signal.addEventListener('abort', abort, { once: true });
      this.#resume = () => {
        end();
        resolve();
      };
    });
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

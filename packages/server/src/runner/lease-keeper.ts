/**
 * Renews the leases of every run of a worker pool together, one statement a round (a thousand claims a
 * statement), every third of the lease: a pool following thousands of remote jobs costs the store a few writes a
 * round rather than one per job. A run whose claim is no longer current is told why (the client's cancel, or a
 * lost lease); cut off from the store, a run is told its lease is lost once it would have run out, as another
 * worker may have the task by then.
 */
import type { Logger } from 'pino';
import type { Claim, ClaimStore, TaskStore } from '../ports/store.js';
import { claimEndedFor, type StopReason } from './run-stopped.js';

interface Held {
  readonly claim: Claim;
  readonly onLost: (reason: StopReason) => void;
  heldUntil: number;
}

export interface LeaseKeeperOptions {
  readonly store: Pick<ClaimStore, 'renewLeases'> & Pick<TaskStore, 'getTask'>;
  readonly workerId: string;
  readonly leaseMs: number;
  readonly logger: Logger;
}

export class LeaseKeeper {
  readonly #options: LeaseKeeperOptions;
  readonly #held = new Map<string, Held>();
  #timer: NodeJS.Timeout | undefined;
  #round: Promise<void> | undefined;

  constructor(options: LeaseKeeperOptions) {
    this.#options = options;
  }

  /** Keeps `claim`'s lease until the returned function is called; `onLost` hears once why it ended early. */
  hold(claim: Claim, onLost: (reason: StopReason) => void): () => void {
    const held: Held = { claim, onLost, heldUntil: Date.now() + this.#options.leaseMs };
    // The pool claimed the task again (the older run lost its lease): that run's claim is over.
    const older = this.#held.get(claim.taskId);
    if (older) this.#lose(older, 'lease_lost');
    this.#held.set(claim.taskId, held);
    this.#timer ??= setInterval(
      () => void this.#renew(),
      Math.max(250, Math.floor(this.#options.leaseMs / 3)),
    );
    return () => {
      if (this.#held.get(claim.taskId) === held) this.#held.delete(claim.taskId);
      if (this.#held.size === 0) this.stop();
    };
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #renew(): Promise<void> {
    // One round at a time: a slow store is not sent a second round of the same claims.
    this.#round ??= this.#renewAll().finally(() => {
      this.#round = undefined;
    });
    return this.#round;
  }

  async #renewAll(): Promise<void> {
    const { store, workerId, leaseMs, logger } = this.#options;
    const held = [...this.#held.values()];
    if (held.length === 0) return;
    const renewedAt = Date.now();
    let renewed: Set<string>;
    try {
      renewed = await store.renewLeases(
        workerId,
        held.map((each) => each.claim),
        leaseMs,
      );
    } catch (error) {
      logger.warn({ err: error }, 'lease renewal failed');
      for (const each of held) if (Date.now() >= each.heldUntil) this.#lose(each, 'lease_lost');
      return;
    }
    await Promise.all(
      held.map(async (each) => {
        if (renewed.has(each.claim.taskId)) {
          each.heldUntil = renewedAt + leaseMs;
          return;
        }
        // The client's cancel ends the claim too, and unlike a lost lease it ends the upstream job.
        const task = await store.getTask(each.claim.taskId).catch(() => null);
        this.#lose(each, task === null ? 'lease_lost' : claimEndedFor(task));
      }),
    );
  }

  #lose(held: Held, reason: StopReason): void {
    if (this.#held.get(held.claim.taskId) !== held) return;
    this.#held.delete(held.claim.taskId);
    held.onLost(reason);
  }
}

/**
 * Which worker pools to take for dead from the pools whose worker lock is missing (PostgreSQL). A pool whose
 * process died has lost its lock for good; a pool whose lock's connection was reset (a PostgreSQL restart,
 * `pg_terminate_backend`, a network blip) takes it again as it reconnects, about a second later, and must keep
 * its tasks: requeued meanwhile, every remote job and render it runs would start again. So a pool counts as dead
 * only once its lock has been missing for `graceMs` across this judge's looks.
 */
export class OrphanJudge {
  readonly #missingSince = new Map<string, number>();

  constructor(
    private readonly graceMs: number,
    /** This judge's own pool: never judged (its lock comes back with its connection). */
    private readonly self: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** Given the pools missing their lock now, the ones missing it for at least the grace period. */
  dead(lockless: readonly string[]): string[] {
    const at = this.now();
    const missing = new Set(lockless.filter((id) => id !== this.self));
    for (const id of this.#missingSince.keys()) if (!missing.has(id)) this.#missingSince.delete(id);
    const dead: string[] = [];
    for (const id of missing) {
      const since = this.#missingSince.get(id);
      if (since === undefined) this.#missingSince.set(id, at);
      else if (at - since >= this.graceMs) dead.push(id);
    }
    for (const id of dead) this.#missingSince.delete(id);
    return dead;
  }
}

/**
 * A pause that a wake ends early: between polls of an upstream job, ended when there is news of the job (its
 * watcher, a provider's callback). A wake that comes while no pause is under way ends the next pause at once:
 * the poll in flight then may have been answered before the change.
 */
export class WakeablePause {
  #woken: AbortController | undefined;
  #missed = false;

  wake(): void {
    if (this.#woken) this.#woken.abort();
    else this.#missed = true;
  }

  /**
   * Runs the pause `pausing` starts, which ends when `until` aborts: resolves when it ends or is woken, rejects
   * with the reason when `signal` aborts.
   */
  async pause(pausing: (until: AbortSignal) => Promise<void>, signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (this.#missed) {
      this.#missed = false;
      return;
    }
    const woken = new AbortController();
    this.#woken = woken;
    try {
      await pausing(AbortSignal.any([signal, woken.signal]));
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (!woken.signal.aborted) throw error;
    } finally {
      this.#woken = undefined;
    }
  }
}

/**
 * The `WorkSignal` port: a wake-up hint that work may be waiting, shared by every process using one store.
 *
 * The store stays the only source of truth: a signal says "look now", never "here is a task". Claimers keep a
 * slow poll as well, because some work becomes due with nobody to announce it (an expired lease, a callback
 * retry whose backoff has passed) and because a hint can be lost (a dropped connection, a crash between
 * commit and notify). The signal only turns "wait up to a poll interval" into "start at once" for the common
 * case of work created by another process.
 *
 * Implementations: `LocalWorkSignal` (one process, as with SQLite) and `PgWorkSignal` (PostgreSQL
 * LISTEN/NOTIFY, across processes and machines).
 */

/**
 * What kind of work: tasks to claim (worker pools), callbacks to send (webhook dispatchers), cancelled tasks
 * whose renders should stop (worker pools), or tasks whose status or progress changed, which event streams
 * show (tasks/task-watcher.ts).
 */
export const WORK_TOPICS = ['tasks', 'deliveries', 'cancellations', 'changes'] as const;
export type WorkTopic = (typeof WORK_TOPICS)[number];

/** Called with no arguments: there is nothing to pass on but "look again". It must not block or throw. */
export type WorkListener = () => void;

export interface WorkSignal {
  /**
   * Tells every subscriber of `topic`, in this process and others, that work may be waiting. Call it after
   * the transaction that made the work has committed, or a woken claimer may look before the work is visible.
   *
   * Best effort by contract: it never rejects (a failure to signal is reported to the implementation's error
   * hook, and the pollers pick the work up), so a request handler may fire it with `void signal.notify(…)`.
   * Hints may be coalesced or duplicated; listeners must treat every call as "maybe".
   */
  notify(topic: WorkTopic): Promise<void>;

  /**
   * Calls `listener` whenever `topic` is notified from then on, and also, unprompted, whenever the signal
   * may have missed notifications (when listening starts, and again after a lost connection is re-established),
   * so a listener never has to tell a real hint from a catch-up one. Subscribe before the first look for work,
   * so nothing created in between is missed. Returns a function that unsubscribes; calling it again does nothing.
   */
  subscribe(topic: WorkTopic, listener: WorkListener): () => void;

  /** Drops every listener and releases connections; `notify` does nothing afterwards. */
  close(): Promise<void>;
}

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
 * whose renders should stop (worker pools), tasks whose status or progress changed, which event streams
 * show (tasks/task-watcher.ts), or a task whose upstream job should be polled now, its provider having called
 * back (`polls`, hinted with the task's id: runner/job-wakeups.ts).
 */
export const WORK_TOPICS = ['tasks', 'deliveries', 'cancellations', 'changes', 'polls'] as const;
export type WorkTopic = (typeof WORK_TOPICS)[number];

/** The longest hint a notification carries (PostgreSQL's payload limit is 8000 bytes, shared with the sender's id). */
export const MAX_HINT_LENGTH = 200;

/**
 * Called with the notification's hint, when it has one, else with none: "look again". A call without a hint
 * is also how a catch-up comes (when listening starts or resumes), so a listener that acts on hints alone
 * ignores it. It must not block or throw.
 */
export type WorkListener = (hint?: string) => void;

export interface WorkSignal {
  /**
   * Tells every subscriber of `topic`, in this process and others, that work may be waiting. Call it after
   * the transaction that made the work has committed, or a woken claimer may look before the work is visible.
   *
   * Best effort by contract: it never rejects (a failure to signal is reported to the implementation's error
   * hook, and the pollers pick the work up), so a request handler may fire it with `void signal.notify(…)`.
   * Hints may be coalesced or duplicated; listeners must treat every call as "maybe". A `hint` (at most
   * `MAX_HINT_LENGTH` characters; a longer one is not sent) names what may be waiting, such as one task; calls
   * with a hint are never coalesced with others.
   */
  notify(topic: WorkTopic, hint?: string): Promise<void>;

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

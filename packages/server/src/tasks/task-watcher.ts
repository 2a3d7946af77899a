/**
 * Every event stream of the process following its task through one reader: one store read of all the watched
 * tasks when a change may have happened, not one read per stream every 250 ms (1,770 streams on pending tasks
 * took a server from 3 % to 38 % CPU, issue 33).
 *
 * What wakes the reader is the hint that some task changed (the WorkSignal's `changes`, which PostgreSQL carries
 * to every process), and a slow poll besides, for the changes nobody announces (a task handed back by a worker
 * that is gone) and for hints that were lost. Reads are at least `minGapMs` apart, so a burst of hints is one
 * read, and a read answers every watch at once.
 */
import { isFinal, type TaskRecord } from '../domain/task.js';

/** How often the watched tasks are read when no hint comes. */
export const FALLBACK_POLL_MS = 2000;
/** The least time between two reads: changes closer together than this arrive as one. */
export const MIN_READ_GAP_MS = 250;

export interface TaskWatcherOptions {
  /** The tasks of `ids` that exist, by id, in one store read (`TaskStore.getTasks`). */
  readonly read: (ids: readonly string[]) => Promise<ReadonlyMap<string, TaskRecord>>;
  /** Calls `listener` whenever some task may have changed; answers a function that unsubscribes. */
  readonly subscribe?: (listener: () => void) => () => void;
  readonly fallbackMs?: number;
  readonly minGapMs?: number;
  /** Told about a read that failed; the watches go on, and the next wake-up reads again. */
  readonly onError?: (error: unknown) => void;
}

interface Watch {
  /** The revision of the last state handed out (or known to the caller). */
  revision: number;
  /** A newer state not taken yet: only the newest is kept. */
  next: TaskRecord | undefined;
  /** The task is no longer in the store (deleted). */
  gone: boolean;
  wake: (() => void) | undefined;
}

export class TaskWatcher {
  readonly #read: TaskWatcherOptions['read'];
  readonly #subscribe: TaskWatcherOptions['subscribe'];
  readonly #fallbackMs: number;
  readonly #minGapMs: number;
  readonly #onError: (error: unknown) => void;
  readonly #watches = new Map<string, Set<Watch>>();
  #unsubscribe: (() => void) | undefined;
  #poll: NodeJS.Timeout | undefined;
  #scheduled: NodeJS.Timeout | undefined;
  #reading = false;
  /** A wake-up came during a read: read again after it, as the change may have missed it. */
  #again = false;
  #lastReadAt = Number.NEGATIVE_INFINITY;

  constructor(options: TaskWatcherOptions) {
    this.#read = options.read;
    this.#subscribe = options.subscribe;
    this.#fallbackMs = options.fallbackMs ?? FALLBACK_POLL_MS;
    this.#minGapMs = options.minGapMs ?? MIN_READ_GAP_MS;
    this.#onError = options.onError ?? (() => undefined);
  }

  /** How many watches are open, for tests and metrics. */
  get size(): number {
    let size = 0;
    for (const watches of this.#watches.values()) size += watches.size;
    return size;
  }

  /**
   * The task's states of a revision above `after`, in order, the newest when several came between two reads.
   * Returns after a final state, when the task is gone, or when `signal` fires (at once, whatever it waits for).
   */
  async *watch(
    taskId: string,
    after: number,
    signal: AbortSignal,
  ): AsyncGenerator<TaskRecord, void, undefined> {
    if (signal.aborted) return;
    const watch: Watch = { revision: after, next: undefined, gone: false, wake: undefined };
    const onAbort = () => watch.wake?.();
    signal.addEventListener('abort', onAbort, { once: true });
    this.#add(taskId, watch);
    try {
      for (;;) {
        const next = watch.next;
        if (next) {
          watch.next = undefined;
          yield next;
          if (isFinal(next.status)) return;
        } else if (watch.gone) {
          return;
        } else {
          await new Promise<void>((resolve) => {
            watch.wake = resolve;
          });
          watch.wake = undefined;
        }
        if (signal.aborted) return;
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.#remove(taskId, watch);
    }
  }

  #add(taskId: string, watch: Watch): void {
    if (this.#watches.size === 0) {
      this.#unsubscribe = this.#subscribe?.(() => this.#wake());
      this.#poll = setInterval(() => this.#wake(), this.#fallbackMs);
      this.#poll.unref();
    }
    let watches = this.#watches.get(taskId);
    if (!watches) {
      watches = new Set();
      this.#watches.set(taskId, watches);
    }
    watches.add(watch);
    // The caller read the task before this watch began: a change in between was announced to nobody watching it.
    this.#wake();
  }

  #remove(taskId: string, watch: Watch): void {
    const watches = this.#watches.get(taskId);
    if (!watches?.delete(watch)) return;
    if (watches.size > 0) return;
    this.#watches.delete(taskId);
    if (this.#watches.size > 0) return;
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    clearInterval(this.#poll);
    clearTimeout(this.#scheduled);
    this.#scheduled = undefined;
  }

  #wake(): void {
    if (this.#watches.size === 0) return;
    if (this.#reading) {
      this.#again = true;
      return;
    }
    if (this.#scheduled) return;
    const delay = Math.max(0, this.#lastReadAt + this.#minGapMs - performance.now());
    this.#scheduled = setTimeout(() => {
      this.#scheduled = undefined;
      void this.#readAll();
    }, delay);
  }

  async #readAll(): Promise<void> {
    if (this.#watches.size === 0) return;
    this.#reading = true;
    this.#again = false;
    this.#lastReadAt = performance.now();
    const ids = [...this.#watches.keys()];
    try {
      const tasks = await this.#read(ids);
      for (const id of ids) {
        const task = tasks.get(id);
        for (const watch of this.#watches.get(id) ?? []) {
          if (!task) watch.gone = true;
          else if (task.revision > watch.revision) {
            watch.revision = task.revision;
            watch.next = task;
          } else continue;
          watch.wake?.();
        }
      }
    } catch (error) {
      this.#onError(error);
    } finally {
      this.#reading = false;
      if (this.#again) this.#wake();
    }
  }
}

/**
 * How long a run of each model typically takes, for the task object's `task_info.estimated_time`
 * (domain/task-info.ts): the median time from claim to completion of the model's last 20 completed tasks of the
 * last 24 hours, in any process (the store's timestamps). Kept per process for 30 s, so polls do not ask the store
 * each time: after that the first caller still gets the kept figure while one read renews it. A model without
 * runs in the window has none (no `estimated_time`); that is not kept past its 30 s, and the read that follows
 * is waited for, so a model's first figure comes with the first read after its first runs.
 */
import type { ModelId } from '../domain/models.js';
import type { TaskInfoContext } from '../domain/task-info.js';
import type { TaskStore } from '../ports/store.js';

export const RUN_TIME_SAMPLE = 20;
export const RUN_TIME_WINDOW_MS = 24 * 60 * 60 * 1000;
export const RUN_TIME_TTL_MS = 30_000;

interface Entry {
  /** Epoch ms of the read behind `value`. */
  readonly at: number;
  readonly value: Promise<number | undefined>;
  /** Once `value` has settled: what it came to. */
  settled: { readonly figure: number | undefined } | undefined;
  /** A read to replace this entry is under way. */
  renewing: boolean;
}

export interface RunTimeEstimatesOptions {
  readonly store: Pick<TaskStore, 'recentRunTimes'>;
  readonly now?: () => number;
  readonly ttlMs?: number;
  readonly windowMs?: number;
  readonly sample?: number;
  /** A read failed: the model has no figure until the next one. */
  readonly onError?: (error: unknown) => void;
}

export class RunTimeEstimates {
  readonly #store: Pick<TaskStore, 'recentRunTimes'>;
  readonly #now: () => number;
  readonly #ttlMs: number;
  readonly #windowMs: number;
  readonly #sample: number;
  readonly #onError: (error: unknown) => void;
  readonly #entries = new Map<ModelId, Entry>();

  constructor(options: RunTimeEstimatesOptions) {
    this.#store = options.store;
    this.#now = options.now ?? Date.now;
    this.#ttlMs = options.ttlMs ?? RUN_TIME_TTL_MS;
    this.#windowMs = options.windowMs ?? RUN_TIME_WINDOW_MS;
    this.#sample = options.sample ?? RUN_TIME_SAMPLE;
    this.#onError = options.onError ?? (() => {});
  }

  /** Milliseconds a run of `model` typically takes; undefined when it has no recent runs. */
  typicalRunMs(model: ModelId): Promise<number | undefined> {
    const now = this.#now();
    const entry = this.#entries.get(model);
    if (entry !== undefined && (now - entry.at < this.#ttlMs || entry.settled === undefined))
      return entry.value;
    // Having none is not kept past its time: the model's first figure comes with the first read after its runs.
    if (entry === undefined || entry.settled?.figure === undefined) {
      const fresh = this.#entry(model, now);
      this.#entries.set(model, fresh);
      return fresh.value;
    }
    if (!entry.renewing) {
      entry.renewing = true;
      const next = this.#entry(model, now);
      void next.value.then(() => this.#entries.set(model, next));
    }
    return entry.value;
  }

  #entry(model: ModelId, now: number): Entry {
    const entry: Entry = {
      at: now,
      value: this.#read(model, now).then((figure) => {
        entry.settled = { figure };
        return figure;
      }),
      settled: undefined,
      renewing: false,
    };
    return entry;
  }

  async #read(model: ModelId, now: number): Promise<number | undefined> {
    try {
      return median(
        await this.#store.recentRunTimes(model, { since: now - this.#windowMs, limit: this.#sample }),
      );
    } catch (error) {
      this.#onError(error);
      return undefined;
    }
  }
}

export function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/**
 * What presenting a task needs besides the task: the prices' currency, and, while it is live, its model's
 * typical run (not looked up for a final task).
 */
export async function taskInfoContext(
  task: { readonly model: ModelId; readonly status: string },
  runTimes: RunTimeEstimates | undefined,
  currency: string | undefined,
): Promise<TaskInfoContext> {
  const live = task.status === 'pending' || task.status === 'processing';
  const typicalRunMs = live && runTimes ? await runTimes.typicalRunMs(task.model) : undefined;
  return { currency, typicalRunMs };
}

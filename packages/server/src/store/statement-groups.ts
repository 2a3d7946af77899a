/**
 * Database operations submitted while the event loop is busy, run together as one group: those that arrive in
 * the same turn, and those arriving while a group runs, go in the next group. One group runs at a time, so under
 * load groups grow with the load: a group of creations costs one commit (sqlite/sqlite-creations.ts on SQLite,
 * pg/pg-creations.ts on PostgreSQL), a group of task reads one statement (pg/pg-task-reads.ts, where each read
 * costs a round trip); an operation arriving alone runs at once, alone.
 */

/** What became of one operation of a group. */
export type Settled<Result> =
  | { readonly ok: true; readonly result: Result }
  | { readonly ok: false; readonly error: unknown };

/** Runs a group; answers one outcome per item, in order. A rejection fails every operation of the group. */
export type GroupRunner<Item, Result> = (items: readonly Item[]) => Promise<readonly Settled<Result>[]>;

interface Waiting<Item, Result> {
  readonly item: Item;
  resolve(result: Result): void;
  reject(error: unknown): void;
}

/** Operations taken in one group at most: bounds how long one statement or transaction holds the database. */
const MOST_PER_GROUP = 256;

export class StatementGroups<Item, Result> {
  readonly #run: GroupRunner<Item, Result>;
  #waiting: Waiting<Item, Result>[] = [];
  #scheduled = false;
  /** The group running, if any: `drain` waits for it. */
  #running: Promise<void> | undefined;

  constructor(run: GroupRunner<Item, Result>) {
    this.#run = run;
  }

  submit(item: Item): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      this.#waiting.push({ item, resolve, reject });
      this.#schedule();
    });
  }

  /** Resolves once every operation submitted so far has run or been refused. */
  async drain(): Promise<void> {
    while (this.#running || this.#waiting.length > 0) {
      if (this.#running) await this.#running;
      else await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  #schedule(): void {
    if (this.#scheduled || this.#running) return;
    this.#scheduled = true;
    // After the I/O callbacks of this turn of the event loop: the requests that arrived together are grouped.
    setImmediate(() => {
      this.#scheduled = false;
      this.#running = this.#runGroup().finally(() => {
        this.#running = undefined;
        if (this.#waiting.length > 0) this.#schedule();
      });
    });
  }

  async #runGroup(): Promise<void> {
    const group = this.#waiting.splice(0, MOST_PER_GROUP);
    let outcomes: readonly Settled<Result>[];
    try {
      outcomes = await this.#run(group.map((waiting) => waiting.item));
    } catch (error) {
      for (const waiting of group) waiting.reject(error);
      return;
    }
    group.forEach((waiting, index) => {
      const outcome = outcomes[index];
      if (outcome?.ok) waiting.resolve(outcome.result);
      else waiting.reject(outcome ? outcome.error : new Error('a grouped operation had no outcome'));
    });
  }
}

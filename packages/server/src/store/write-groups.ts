/**
 * Writes submitted while the event loop is busy, run together as one group: the requests that arrive in the
 * same turn, and those arriving while a group is being written, go in the next group. One group is written at
 * a time, so under load groups grow with the load and each costs one commit (sqlite-creation-groups.ts on SQLite,
 * pg-creation-groups.ts on PostgreSQL); a write arriving alone is written at once, alone. Reads that cost a
 * round trip each are grouped the same way, one statement a group (pg-task-reads.ts).
 */

/** What became of one write of a group. */
export type Settled<Result> =
  | { readonly ok: true; readonly result: Result }
  | { readonly ok: false; readonly error: unknown };

/** Writes a group; answers one outcome per item, in order. A rejection fails every write of the group. */
export type GroupWriter<Item, Result> = (items: readonly Item[]) => Promise<readonly Settled<Result>[]>;

interface Waiting<Item, Result> {
  readonly item: Item;
  resolve(result: Result): void;
  reject(error: unknown): void;
}

/** Writes taken in one group at most: bounds how long one statement or transaction holds the database. */
const MOST_PER_GROUP = 256;

export class WriteGroups<Item, Result> {
  readonly #write: GroupWriter<Item, Result>;
  #waiting: Waiting<Item, Result>[] = [];
  #scheduled = false;
  /** The group being written, if any: `drain` waits for it. */
  #running: Promise<void> | undefined;

  constructor(write: GroupWriter<Item, Result>) {
    this.#write = write;
  }

  submit(item: Item): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      this.#waiting.push({ item, resolve, reject });
      this.#schedule();
    });
  }

  /** Resolves once every write submitted so far is written or refused. */
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
      outcomes = await this.#write(group.map((waiting) => waiting.item));
    } catch (error) {
      for (const waiting of group) waiting.reject(error);
      return;
    }
    group.forEach((waiting, index) => {
      const outcome = outcomes[index];
      if (outcome?.ok) waiting.resolve(outcome.result);
      else waiting.reject(outcome ? outcome.error : new Error('a grouped write had no outcome'));
    });
  }
}

/**
 * Group commit: writes submitted while the event loop is busy run together in one transaction, each inside a
 * savepoint of its own, and each caller is answered after the commit that holds its rows, so nothing is answered
 * before it is durable. On SQLite a creation's commit (writing its pages to the WAL) was the largest cost of
 * `POST /v1/videos/generations`; grouped, the pages the creations share (the tables' and indexes' last pages)
 * are written once per group.
 *
 * A write that fails is rolled back to its savepoint and its caller gets the error; the others commit. A group
 * of one runs in a plain transaction. The group runs on the store's one connection, as every transaction does,
 * so each write sees the ones before it in its group: a budget check counts the reservations made just ahead
 * of it.
 */
import { CompiledQuery, type Kysely } from 'kysely';
import type { Database } from './database-schema.js';

interface Waiting<Item, Result> {
  readonly item: Item;
  resolve(result: Result): void;
  reject(error: unknown): void;
}

// Compiled once: building a raw statement anew for each write showed in a creation's profile.
const SAVEPOINT = CompiledQuery.raw('savepoint grouped_write');
const ROLLBACK_TO_SAVEPOINT = CompiledQuery.raw('rollback to grouped_write');
const RELEASE_SAVEPOINT = CompiledQuery.raw('release grouped_write');

/** Writes taken in one group at most: bounds how long one transaction holds the database. */
const MOST_PER_GROUP = 256;

export class GroupCommit<Item, Result> {
  readonly #db: Kysely<Database>;
  readonly #write: (trx: Kysely<Database>, item: Item) => Promise<Result>;
  #waiting: Waiting<Item, Result>[] = [];
  #scheduled = false;
  /** The group being written, if any: `drain` waits for it. */
  #running: Promise<void> | undefined;

  constructor(db: Kysely<Database>, write: (trx: Kysely<Database>, item: Item) => Promise<Result>) {
    this.#db = db;
    this.#write = write;
  }

  submit(item: Item): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      this.#waiting.push({ item, resolve, reject });
      this.#schedule();
    });
  }

  /** Resolves once every write submitted so far is committed or refused. */
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
    const [only] = group;
    if (group.length === 1 && only) {
      try {
        only.resolve(await this.#db.transaction().execute((trx) => this.#write(trx, only.item)));
      } catch (error) {
        only.reject(error);
      }
      return;
    }
    const outcomes: ({ ok: true; result: Result } | { ok: false; error: unknown })[] = [];
    try {
      await this.#db.transaction().execute(async (trx) => {
        for (const { item } of group) {
          await trx.executeQuery(SAVEPOINT);
          try {
            outcomes.push({ ok: true, result: await this.#write(trx, item) });
          } catch (error) {
            await trx.executeQuery(ROLLBACK_TO_SAVEPOINT);
            outcomes.push({ ok: false, error });
          }
          await trx.executeQuery(RELEASE_SAVEPOINT);
        }
      });
    } catch (error) {
      // The commit (or a savepoint) failed: nothing of the group was kept.
      for (const waiting of group) waiting.reject(error);
      return;
    }
    group.forEach((waiting, index) => {
      const outcome = outcomes[index];
      if (outcome?.ok) waiting.resolve(outcome.result);
      else waiting.reject(outcome?.error);
    });
  }
}

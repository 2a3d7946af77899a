/**
 * Group commit on SQLite: writes grouped by `StatementGroups` (statement-groups.ts) run in one transaction,
 * each inside a savepoint of its own, and each caller is answered after the commit that holds its rows, so
 * nothing is answered before it is durable (creations: those sqlite-creations.ts leaves to it). A
 * creation's commit (writing its pages to the WAL) was the largest cost of `POST /v1/videos/generations`;
 * grouped, the pages the creations share (the tables' and indexes' last pages) are written once per group.
 *
 * A write that fails is rolled back to its savepoint and its caller gets the error; the others commit. A group
 * of one runs in a plain transaction. The group runs on the store's one connection, as every transaction does,
 * so each write sees the ones before it in its group: a budget check counts the reservations made just ahead
 * of it.
 */
import { CompiledQuery, type Kysely } from 'kysely';
import type { Database } from '../database-schema.js';
import type { GroupRunner, Settled } from '../statement-groups.js';

// Compiled once: building a raw statement anew for each write showed in a creation's profile.
const SAVEPOINT = CompiledQuery.raw('savepoint grouped_write');
const ROLLBACK_TO_SAVEPOINT = CompiledQuery.raw('rollback to grouped_write');
const RELEASE_SAVEPOINT = CompiledQuery.raw('release grouped_write');

export function groupCommit<Item, Result>(
  db: Kysely<Database>,
  write: (trx: Kysely<Database>, item: Item) => Promise<Result>,
): GroupRunner<Item, Result> {
  return async (items) => {
    const [only] = items;
    if (items.length === 1 && only !== undefined) {
      try {
        return [{ ok: true, result: await db.transaction().execute((trx) => write(trx, only)) }];
      } catch (error) {
        return [{ ok: false, error }];
      }
    }
    // A failed commit (or savepoint) rejects: nothing of the group was kept.
    return db.transaction().execute(async (trx) => {
      const outcomes: Settled<Result>[] = [];
      for (const item of items) {
        await trx.executeQuery(SAVEPOINT);
        try {
          outcomes.push({ ok: true, result: await write(trx, item) });
        } catch (error) {
          // SQLite ends the whole transaction itself on some errors (a full disk): the savepoint is gone with
          // it, and the write's error, not "no such savepoint", is what fails the group.
          await trx.executeQuery(ROLLBACK_TO_SAVEPOINT).catch(() => {
            throw error;
          });
          outcomes.push({ ok: false, error });
        }
        await trx.executeQuery(RELEASE_SAVEPOINT);
      }
      return outcomes;
    });
  };
}

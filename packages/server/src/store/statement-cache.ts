/**
 * Kysely's SQLite driver prepares every statement anew, which was the largest single cost of a poll
 * (`GET /v1/tasks/{id}`). The store issues a small set of SQL strings, so they are kept prepared. None is
 * evicted: a statement lives as long as its thread anyway (sqlite-handles.ts), so one evicted and prepared again
 * would only be a second. The strings that differ are those with a list of values, each as long as a batch, a
 * configured list or the receivers with deliveries in flight at most, so the set is bounded, but not small: a claim
 * of deliveries differs with the receivers in flight and those full, and each of its strings holds some tens of
 * KiB while its database is open.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteDatabase, SqliteStatement } from 'kysely';
import { prepare } from './sqlite-handles.js';

export class StatementCache implements SqliteDatabase {
  readonly #database: BetterSqlite3.Database;
  readonly #statements = new Map<string, SqliteStatement>();

  constructor(database: BetterSqlite3.Database) {
    this.#database = database;
  }

  /** The distinct SQL strings prepared so far. */
  get size(): number {
    return this.#statements.size;
  }

  close(): void {
    this.#database.close();
  }

  prepare(sql: string): SqliteStatement {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = prepare(this.#database, sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }
}

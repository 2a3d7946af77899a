/**
 * Kysely's SQLite driver prepares every statement anew, which was the largest single cost of a poll
 * (`GET /v1/tasks/{id}`). The store issues a fixed set of SQL strings, so they are kept prepared. None is
 * evicted: a statement lives as long as its thread anyway (sqlite-handles.ts), so one evicted and prepared again
 * would only be a second. The set is fixed by the code, not by the data: a statement's text depends on which
 * options its operation was given, never on how many values (a list of ids or hosts, the receivers' rooms: one
 * parameter each, list-parameters.ts; rows written together: a statement each). Each string holds some tens of
 * KiB while its database is open; sqlite-statement-count.test.ts runs every operation of the store with sizes
 * from 1 to 40 and values that differ each time, and checks that they add none.
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

  /** Whether a transaction is open on the connection (SQLite ends one itself on some errors). */
  get inTransaction(): boolean {
    return this.#database.inTransaction;
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

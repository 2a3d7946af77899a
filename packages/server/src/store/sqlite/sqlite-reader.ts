/**
 * A second connection to the store's SQLite file, for the read every poll makes (`GET /v1/tasks/{id}`), run at
 * once rather than through Kysely. Kysely's SQLite driver runs every query on the store's one connection behind
 * a lock, several promise hops each, after whatever write holds the connection (a group of creations, a claim);
 * on a poll that was the largest cost after the framework's own. In WAL mode a reader never waits for the
 * writer and sees exactly the transactions committed before it starts, so a poll on this connection sees what
 * one on the store's connection would have, without ever seeing a transaction still open on it.
 *
 * A file only: an in-memory database is private to its connection.
 */
import { Kysely, SqliteDialect } from 'kysely';
import type { Database } from '../database-schema.js';
import type { PreparedQuery } from '../prepared-query.js';
import { openDatabase, pragma } from './sqlite-handles.js';
import { limitPageCache } from './sqlite-page-cache.js';
import { StatementCache } from './sqlite-statement-cache.js';
import { SqliteStatements } from './sqlite-statements.js';

export class SqliteReader {
  readonly #statements: StatementCache;
  readonly #run: SqliteStatements;

  constructor(path: string, busyTimeoutMs: number) {
    const database = openDatabase(path);
    pragma(database, `busy_timeout = ${busyTimeoutMs}`);
    pragma(database, 'query_only = ON');
    limitPageCache(database);
    this.#statements = new StatementCache(database);
    // Compiles the store's prepared queries for SQLite; never connects.
    const compiler = new Kysely<Database>({ dialect: new SqliteDialect({ database: this.#statements }) });
    this.#run = new SqliteStatements(this.#statements, compiler);
  }

  /** Statements prepared on this connection. */
  get preparedStatements(): number {
    return this.#statements.size;
  }

  /** The rows of `query` with these values, read now. */
  all<Names extends string, Row>(
    query: PreparedQuery<Names, Row>,
    values: Readonly<Record<Names, unknown>>,
  ): Row[] {
    return this.#run.all(query, values);
  }

  close(): void {
    this.#statements.close();
  }
}

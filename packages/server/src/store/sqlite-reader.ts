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
import type { Database } from './database-schema.js';
import type { PreparedQuery } from './prepared-query.js';
import { openDatabase, pragma } from './sqlite-handles.js';
import { limitPageCache } from './sqlite-page-cache.js';
import { StatementCache } from './statement-cache.js';

export class SqliteReader {
  readonly #statements: StatementCache;
  /** Compiles the store's prepared queries for SQLite; never connects. */
  readonly #compiler: Kysely<Database>;

  constructor(path: string, busyTimeoutMs: number) {
    const database = openDatabase(path);
    pragma(database, `busy_timeout = ${busyTimeoutMs}`);
    pragma(database, 'query_only = ON');
    limitPageCache(database);
    this.#statements = new StatementCache(database);
    this.#compiler = new Kysely<Database>({ dialect: new SqliteDialect({ database: this.#statements }) });
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
    const { sql, parameters } = query.statement(this.#compiler, values);
    return this.#statements.prepare(sql).all(parameters) as Row[];
  }

  close(): void {
    this.#statements.close();
  }
}

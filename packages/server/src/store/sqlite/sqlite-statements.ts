/**
 * Prepared queries (prepared-query.ts) run straight on a better-sqlite3 connection, synchronously, without
 * Kysely's executor: for the paths where its promise hops per statement cost more than SQLite's own work (a
 * poll's read, sqlite-reader.ts; a group of creations, sqlite-creations.ts).
 */
import type { Kysely } from 'kysely';
import type { Database } from '../database-schema.js';
import type { PreparedQuery } from '../prepared-query.js';
import type { StatementCache } from './sqlite-statement-cache.js';

export class SqliteStatements {
  readonly #statements: StatementCache;
  /** Compiles the prepared queries for SQLite; never runs them. */
  readonly #compiler: Kysely<Database>;

  constructor(statements: StatementCache, compiler: Kysely<Database>) {
    this.#statements = statements;
    this.#compiler = compiler;
  }

  /** The rows of `query` with these values, read now. */
  all<Names extends string, Row>(
    query: PreparedQuery<Names, Row>,
    values: Readonly<Record<Names, unknown>>,
  ): Row[] {
    const { sql, parameters } = query.statement(this.#compiler, values);
    return this.#statements.prepare(sql).all(parameters) as Row[];
  }

  /** Runs `query`, which returns no rows, with these values, now. */
  run<Names extends string>(
    query: PreparedQuery<Names, unknown>,
    values: Readonly<Record<Names, unknown>>,
  ): void {
    const { sql, parameters } = query.statement(this.#compiler, values);
    this.#statements.prepare(sql).run(parameters);
  }
}

/**
 * A query built and compiled once per database, then run with new values. Building and compiling a query with
 * Kysely costs more than running it on SQLite: on a poll it was most of Kysely's 20 % of the server's time. The
 * hottest operations (the task, the API key, creation's statements) are written this way.
 *
 * The query is built with a placeholder for each named value; compiling it once shows at which position of the
 * parameters each placeholder ended up, and each run puts its values there.
 */
import {
  type AliasedRawBuilder,
  type Compilable,
  type CompiledQuery,
  type DialectAdapter,
  type Kysely,
  sql,
} from 'kysely';
import type { Database } from './database-schema.js';
import { nameStatement } from './pg/pg-named-statements.js';

/** Stands for a named value while the query is built; typed as the value it stands for. */
export type Placeholder<Names extends string> = <T>(name: Names) => T;

interface Compiled<Row> {
  readonly query: CompiledQuery<Row>;
  /** The name of each parameter, by position. */
  readonly names: readonly string[];
}

const PLACEHOLDER_PREFIX = '\u0000videogen-placeholder:';

export interface PreparedQueryOptions {
  /**
   * Sent to PostgreSQL as a named prepared statement (pg-named-statements.ts), planned once per connection:
   * for the statements where planning costs more than running. Its result columns must be listed, not `*`.
   */
  readonly named?: boolean;
}

export interface PreparedQuery<Names extends string, Row> {
  /** Runs the query through `db`. */
  (db: Kysely<Database>, values: Readonly<Record<Names, unknown>>): Promise<Row[]>;
  /** Its SQL for `db`'s dialect, and these values as its parameters, in order: to run it on a connection directly. */
  statement(db: Kysely<Database>, values: Readonly<Record<Names, unknown>>): PreparedStatement;
}

export interface PreparedStatement {
  readonly sql: string;
  readonly parameters: readonly unknown[];
}

export function preparedQuery<Names extends string, Row>(
  build: (db: Kysely<Database>, value: Placeholder<Names>) => Compilable<Row>,
  options: PreparedQueryOptions = {},
): PreparedQuery<Names, Row> {
  // Per dialect adapter, which a store's transactions share with it: the SQL differs between dialects only.
  const compiled = new WeakMap<DialectAdapter, Compiled<Row>>();
  const compile = (db: Kysely<Database>): Compiled<Row> => {
    const query = build(db, <T>(name: Names) => `${PLACEHOLDER_PREFIX}${name}` as T).compile();
    const names = query.parameters.map((parameter) => {
      if (typeof parameter !== 'string' || !parameter.startsWith(PLACEHOLDER_PREFIX)) {
        throw new Error(`prepared query ${query.sql} has a parameter that is not a placeholder`);
      }
      return parameter.slice(PLACEHOLDER_PREFIX.length);
    });
    if (options.named) {
      if (/\breturning \*/i.test(query.sql)) throw new Error(`named statement ${query.sql} returns *`);
      nameStatement(query.sql);
    }
    return { query, names };
  };
  const compiledFor = (db: Kysely<Database>): Compiled<Row> => {
    const adapter = db.getExecutor().adapter;
    let entry = compiled.get(adapter);
    if (!entry) {
      entry = compile(db);
      compiled.set(adapter, entry);
    }
    return entry;
  };
  const run = async (db: Kysely<Database>, values: Readonly<Record<Names, unknown>>): Promise<Row[]> => {
    const entry = compiledFor(db);
    const parameters = entry.names.map((name) => values[name as Names]);
    const result = await db.executeQuery<Row>({ ...entry.query, parameters });
    return result.rows;
  };
  return Object.assign(run, {
    statement(db: Kysely<Database>, values: Readonly<Record<Names, unknown>>): PreparedStatement {
      const entry = compiledFor(db);
      return { sql: entry.query.sql, parameters: entry.names.map((name) => values[name as Names]) };
    },
  });
}

/**
 * A row of placeholders named after its columns, for a prepared `INSERT`: `columns` lists every column (the
 * `satisfies` in the caller keeps it complete), so the row is run with the `Insertable` itself as its values.
 */
export function placeholderRow<Row>(
  columns: Readonly<Record<keyof Row & string, true>>,
  value: Placeholder<keyof Row & string>,
): Row {
  return Object.fromEntries(
    Object.keys(columns).map((column) => [column, value(column as keyof Row & string)]),
  ) as Row;
}

/**
 * The same row as `placeholderRow`, as a select list (each placeholder selected under its column's name): the
 * rows of a prepared `INSERT … SELECT`. `prefix` keeps apart the placeholders of several rows in one statement.
 */
export function placeholderSelection<Row, Prefix extends string>(
  columns: Readonly<Record<keyof Row & string, true>>,
  value: Placeholder<`${Prefix}${keyof Row & string}`>,
  prefix: Prefix,
): AliasedRawBuilder<unknown, keyof Row & string>[] {
  return (Object.keys(columns) as (keyof Row & string)[]).map((column) =>
    sql.val(value(`${prefix}${column}`)).as(column),
  );
}

/** A row's values under the names `placeholderSelection` gave them with `prefix`. */
export function prefixedValues<Row extends object, Prefix extends string>(
  prefix: Prefix,
  row: Row,
): Record<`${Prefix}${keyof Row & string}`, unknown> {
  const values: Record<string, unknown> = {};
  for (const [column, value] of Object.entries(row)) values[`${prefix}${column}`] = value;
  return values as Record<`${Prefix}${keyof Row & string}`, unknown>;
}

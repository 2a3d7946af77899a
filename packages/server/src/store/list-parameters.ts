/**
 * A list of values, or values by key, as ONE parameter of a statement, so that its text is the same however
 * many there are: a `Kysely` `in (…)` list or a `case` with one `when` per item would make a new SQL string for
 * each size, and the SQLite store keeps every string it ever prepared until its thread ends (statement-cache.ts,
 * sqlite-handles.ts). SQLite reads the values from JSON text with `json_each`; PostgreSQL takes a text array
 * (`= any`, which its planner turns into index lookups as it does an `in` list) or a `jsonb` object.
 *
 * The dialect is the one of the `Kysely` the statement is built on (its adapter), which a store's transactions
 * share with it.
 */
import { type Expression, type Kysely, PostgresAdapter, type RawBuilder, type SqlBool, sql } from 'kysely';
import type { Database } from './database-schema.js';

const onPostgres = (db: Kysely<Database>): boolean => db.getExecutor().adapter instanceof PostgresAdapter;

/** The one parameter that carries `values` on `db`'s dialect: what `isOneOfList` binds. */
export function listParameter(db: Kysely<Database>, values: readonly string[]): unknown {
  return onPostgres(db) ? values : JSON.stringify(values);
}

/** The one parameter that carries `entries` on either dialect: what `textAtEntries` binds. */
export function entriesParameter(entries: Readonly<Record<string, string | number>>): string {
  return JSON.stringify(entries);
}

/** `value` is one of `values` (`value in (…)`). */
export function isOneOf(
  db: Kysely<Database>,
  value: Expression<string | null>,
  values: readonly string[],
): RawBuilder<SqlBool> {
  return isOneOfList(db, value, listParameter(db, values));
}

/**
 * `value` is one of the values `list` carries (`listParameter`): for a statement compiled once
 * (prepared-query.ts), where `list` is a placeholder.
 */
export function isOneOfList(
  db: Kysely<Database>,
  value: Expression<string | null>,
  list: unknown,
): RawBuilder<SqlBool> {
  return onPostgres(db)
    ? sql<SqlBool>`${value} = any(cast(${list} as text[]))`
    : sql<SqlBool>`${value} in (select "listed"."value" from json_each(${list}) as "listed")`;
}

/** `value` is none of `values` (`value not in (…)`). */
export function isNoneOf(
  db: Kysely<Database>,
  value: Expression<string | null>,
  values: readonly string[],
): RawBuilder<SqlBool> {
  return onPostgres(db)
    ? sql<SqlBool>`${value} <> all(cast(${values} as text[]))`
    : sql<SqlBool>`${value} not in (select "listed"."value" from json_each(${JSON.stringify(values)}) as "listed")`;
}

/** The integer `entries` has under the key `key`; null when it has none. */
export function integerAt(
  db: Kysely<Database>,
  entries: Readonly<Record<string, number>>,
  key: Expression<string>,
): RawBuilder<number | null> {
  return onPostgres(db)
    ? sql<number | null>`cast(cast(${JSON.stringify(entries)} as jsonb) ->> ${key} as integer)`
    : valueAt(JSON.stringify(entries), key);
}

/** The text `entries` has under the key `key`; null when it has none. */
export function textAt(
  db: Kysely<Database>,
  entries: Readonly<Record<string, string>>,
  key: Expression<string>,
): RawBuilder<string | null> {
  return textAtEntries(db, entriesParameter(entries), key);
}

/** `textAt` of the entries `json` carries (`entriesParameter`), a placeholder in a statement compiled once. */
export function textAtEntries(
  db: Kysely<Database>,
  json: unknown,
  key: Expression<string>,
): RawBuilder<string | null> {
  return onPostgres(db) ? sql<string | null>`cast(${json} as jsonb) ->> ${key}` : valueAt(json, key);
}

/**
 * SQLite: a key's value in a JSON object, looked up among its members (a path such as `$.host` would read the
 * dots of a host name as steps).
 */
function valueAt<T>(json: unknown, key: Expression<string>): RawBuilder<T | null> {
  return sql<T | null>`(select "entry"."value" from json_each(${json}) as "entry" where "entry"."key" = ${key})`;
}

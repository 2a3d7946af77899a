/**
 * better-sqlite3's databases and statements, kept reachable until their thread ends so that none is ever
 * garbage-collected. better-sqlite3 12 wraps them in Node.js's `node::ObjectWrap`, whose destructor, as built
 * from Node.js 24.19's headers, unregisters a cleanup hook of the object's through the current Environment. A
 * collection that V8 starts from JavaScript's own allocations runs that destructor with no Environment at hand,
 * and Node.js aborts the process (`RemoveEnvironmentCleanupHook`: `Assertion failed: (env) != nullptr`;
 * nodejs/node#65446). A kept object is deleted by that very cleanup hook when its thread's Environment ends,
 * which works. better-sqlite3 13 (Node-API) has no such destructor but needs Node.js 22: with support for 20
 * gone, upgrade and remove this module.
 *
 * What it costs: each statement for the life of its thread (SQLite's prepared statement while its database is
 * open, only better-sqlite3's small wrapper once it closes). The store prepares each of its SQL strings once per
 * database, and their number is fixed by its code whatever the data (statement-cache.ts); a pragma run again
 * reuses its statement.
 */
import BetterSqlite3 from 'better-sqlite3';

const kept: object[] = [];
const pragmas = new Map<BetterSqlite3.Database, Map<string, BetterSqlite3.Statement>>();

export function openDatabase(path: string, options?: BetterSqlite3.Options): BetterSqlite3.Database {
  const database = new BetterSqlite3(path, options);
  kept.push(database);
  return database;
}

export function prepare(database: BetterSqlite3.Database, sql: string): BetterSqlite3.Statement {
  const statement = database.prepare(sql);
  kept.push(statement);
  return statement;
}

/**
 * `PRAGMA source`: its rows, or with `simple` the first column of the first row, as better-sqlite3's own
 * `database.pragma` (which prepares a statement each time and lets it go).
 */
export function pragma(
  database: BetterSqlite3.Database,
  source: string,
  options: { simple?: boolean } = {},
): unknown {
  let statements = pragmas.get(database);
  if (!statements) {
    statements = new Map();
    pragmas.set(database, statements);
  }
  let statement = statements.get(source);
  if (!statement) {
    statement = prepare(database, `PRAGMA ${source}`);
    statements.set(source, statement);
  }
  // A pragma that sets a value without reporting it returns no columns, and such a statement can only be run.
  if (!statement.reader) {
    statement.run();
    return options.simple ? undefined : [];
  }
  return options.simple ? statement.pluck(true).get() : statement.pluck(false).all();
}

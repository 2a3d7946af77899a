/**
 * Kysely's SQLite driver prepares every statement anew, which was the largest single cost of a poll
 * (`GET /v1/tasks/{id}`). The store issues a small, fixed set of SQL strings, so they are kept prepared.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

export function withStatementCache(database: BetterSqlite3.Database, limit = 256): SqliteDatabase {
  const statements = new Map<string, SqliteStatement>();
  return {
    close: () => database.close(),
    prepare(sql: string): SqliteStatement {
      let statement = statements.get(sql);
      if (!statement) {
        statement = database.prepare(sql);
        // Oldest first out; queries built with a variable number of parameters could otherwise grow it.
        if (statements.size >= limit) statements.delete(statements.keys().next().value as string);
        statements.set(sql, statement);
      }
      return statement;
    },
  };
}

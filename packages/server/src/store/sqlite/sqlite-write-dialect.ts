/**
 * Kysely's SQLite dialect with two changes to its transactions, for a file that several processes write.
 *
 * They begin IMMEDIATE: Kysely's own `begin` is deferred, so a transaction that reads before it writes (a
 * creation checking the account's budget) holds only a read snapshot, and if another process commits meanwhile
 * its first write cannot take the write lock at all: SQLite answers SQLITE_BUSY at once, without waiting
 * `busy_timeout` (waiting could not help, its snapshot is stale). Begun IMMEDIATE, it takes the write lock
 * first, waiting up to `busy_timeout` for the other process's transaction to end. Every transaction the store
 * opens through Kysely writes, so none pays for a lock it does not need.
 *
 * A rollback after SQLite has ended the transaction itself is skipped: on SQLITE_FULL, SQLITE_IOERR or
 * SQLITE_NOMEM (a commit that could not write the WAL) SQLite rolls back on its own, and Kysely's rollback then
 * fails with "cannot rollback - no transaction is active", an error Kysely throws in place of the one that
 * ended the transaction (which said what happened: the disk is full).
 */
import { CompiledQuery, type DatabaseConnection, type Driver, SqliteDialect, SqliteDriver } from 'kysely';
import type { StatementCache } from './sqlite-statement-cache.js';

const BEGIN_IMMEDIATE = CompiledQuery.raw('begin immediate');

class SqliteWriteDriver extends SqliteDriver {
  readonly #database: StatementCache;

  constructor(database: StatementCache) {
    super({ database });
    this.#database = database;
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(BEGIN_IMMEDIATE);
  }

  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    if (!this.#database.inTransaction) return;
    await super.rollbackTransaction(connection);
  }
}

export class SqliteWriteDialect extends SqliteDialect {
  readonly #database: StatementCache;

  constructor(database: StatementCache) {
    super({ database });
    this.#database = database;
  }

  override createDriver(): Driver {
    return new SqliteWriteDriver(this.#database);
  }
}

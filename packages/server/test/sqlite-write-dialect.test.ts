/**
 * The SQLite store's transactions (sqlite-write-dialect.ts): they hold the write lock from their start, and an
 * error after which SQLite rolled back by itself (a full disk at commit) reaches the caller as itself, not as
 * the failed rollback that follows it.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, type SqliteStatement, sql } from 'kysely';
import type { Database } from '../src/store/database-schema.js';
import { groupCommit } from '../src/store/sqlite/sqlite-group-commit.js';
import { openDatabase, pragma, prepare } from '../src/store/sqlite/sqlite-handles.js';
import { StatementCache } from '../src/store/sqlite/sqlite-statement-cache.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { SqliteWriteDialect } from '../src/store/sqlite/sqlite-write-dialect.js';

/** What better-sqlite3 throws when a commit cannot write the WAL for lack of space: SQLite has rolled back. */
function diskFull(): Error {
  return new BetterSqlite3.SqliteError('database or disk is full', 'SQLITE_FULL');
}

/** A connection whose `commit` fails as on a full disk: the transaction rolled back, then SQLITE_FULL. */
class FullAtCommit extends StatementCache {
  readonly #database: BetterSqlite3.Database;

  constructor(database: BetterSqlite3.Database) {
    super(database);
    this.#database = database;
  }

  override prepare(text: string): SqliteStatement {
    if (text !== 'commit') return super.prepare(text);
    const database = this.#database;
    return {
      reader: false,
      all: () => [],
      iterate: () => [][Symbol.iterator](),
      run() {
        database.exec('rollback');
        throw diskFull();
      },
    };
  }
}

describe('the SQLite store’s transactions', () => {
  let dir: string;
  let files = 0;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'videogen-sqlite-write-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function migrated(): Promise<string> {
    const path = join(dir, `store-${++files}.db`);
    const store = new SqliteStore({ path });
    await store.migrate();
    await store.close();
    return path;
  }

  it('begin IMMEDIATE: another connection cannot write while one is open, even before its first write', async () => {
    const path = await migrated();
    const db = new Kysely<Database>({
      dialect: new SqliteWriteDialect(new StatementCache(openDatabase(path))),
    });
    const other = openDatabase(path);
    pragma(other, 'busy_timeout = 0');
    try {
      const refused = await db.transaction().execute(async (trx) => {
        await sql`select count(*) from accounts`.execute(trx);
        try {
          other.exec("insert into secrets (name, value, created_at) values ('other', 'x', 1)");
          return undefined;
        } catch (error) {
          return error;
        }
      });
      assert.ok(refused instanceof Error);
      assert.equal((refused as Error & { code?: string }).code, 'SQLITE_BUSY');
    } finally {
      other.close();
      await db.destroy();
    }
  });

  it('throws the commit’s SQLITE_FULL, not "cannot rollback - no transaction is active"', async () => {
    const path = await migrated();
    const database = openDatabase(path);
    const db = new Kysely<Database>({ dialect: new SqliteWriteDialect(new FullAtCommit(database)) });
    try {
      await assert.rejects(
        db
          .transaction()
          .execute((trx) =>
            trx.insertInto('secrets').values({ name: 'n', value: 'v', created_at: 1 }).execute(),
          ),
        (error: Error & { code?: string }) => error.code === 'SQLITE_FULL',
      );
      assert.equal(database.inTransaction, false);
      // And the connection goes on: the next transaction is a fresh one.
      await assert.rejects(
        db.transaction().execute(async () => undefined),
        { code: 'SQLITE_FULL' },
      );
    } finally {
      await db.destroy();
    }
  });

  it('fails a group of writes with the SQLITE_FULL that ended its transaction, not "no such savepoint"', async () => {
    const path = await migrated();
    const database = openDatabase(path);
    const db = new Kysely<Database>({ dialect: new SqliteWriteDialect(new StatementCache(database)) });
    const run = groupCommit(db, async (trx, name: string) => {
      if (name === 'full') {
        // What SQLite does when it cannot go on for lack of space: the whole transaction is rolled back.
        database.exec('rollback');
        throw diskFull();
      }
      await trx.insertInto('secrets').values({ name, value: 'v', created_at: 1 }).execute();
      return name;
    });
    try {
      await assert.rejects(run(['first', 'full', 'last']), { code: 'SQLITE_FULL' });
      assert.equal(database.inTransaction, false);
      assert.deepEqual(prepare(database, 'select name from secrets').all(), []);
    } finally {
      await db.destroy();
    }
  });
});

/**
 * The page cache of each connection the store holds on its SQLite file (its own and the poll reader's): 2 MB,
 * SQLite's own default. better-sqlite3 is built with 16 MB (`SQLITE_DEFAULT_CACHE_SIZE=-16000`), and a
 * connection's cache grows with the pages it reads until it holds that much, so the server's memory rose with its
 * database by up to 32 MB, as if it leaked (docs/benchmarks.md#server-memory-idle-and-after-5000-tasks). A page
 * past the cache is read again from the operating system's file cache: a system call and a copy, which neither
 * creation nor polling nor the 1M-task pages showed.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { pragma } from './sqlite-handles.js';

/** In KiB, as `PRAGMA cache_size` takes a negative number. */
const PAGE_CACHE_KIB = 2000;

export function limitPageCache(database: BetterSqlite3.Database): void {
  pragma(database, `cache_size = -${PAGE_CACHE_KIB}`);
}

/**
 * Puts a SQLite database in WAL mode. On a new file the switch takes an exclusive lock without SQLite's busy
 * handler, so a process opening the file while another is switching it is refused at once (SQLITE_BUSY,
 * "database is locked") whatever `busy_timeout` says: several processes started together on a new data
 * directory (a server and a CLI command, the workers of one machine) could fail to start. The switch is tried
 * again until the busy timeout has passed; once the file is in WAL mode, which it stays, the pragma takes no lock.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { pragma } from './sqlite-handles.js';

/** Waits between tries, doubling up to this. */
const LONGEST_WAIT_MS = 50;

function isBusy(error: unknown): boolean {
  return error instanceof Error && 'code' in error && String(error.code).startsWith('SQLITE_BUSY');
}

export function enableWal(database: BetterSqlite3.Database, timeoutMs: number): void {
  retriedWhileBusy(() => pragma(database, 'journal_mode = WAL'), timeoutMs);
}

/** Runs `action`, again after a short blocking wait while SQLite refuses it as busy, until `timeoutMs` has passed. */
export function retriedWhileBusy<T>(action: () => T, timeoutMs: number, now: () => number = Date.now): T {
  const deadline = now() + timeoutMs;
  // The store opens synchronously (the constructor): a blocking wait, as SQLite's own busy handler would do.
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let waitMs = 1; ; waitMs = Math.min(waitMs * 2, LONGEST_WAIT_MS)) {
    try {
      return action();
    } catch (error) {
      if (!isBusy(error) || now() >= deadline) throw error;
      Atomics.wait(pause, 0, 0, waitMs);
    }
  }
}

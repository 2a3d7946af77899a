/**
 * Statistics for SQLite's query planner, kept the way SQLite recommends for long-lived connections
 * (sqlite.org/pragma.html#pragma_optimize): `PRAGMA optimize=0x10002` when the connection opens and after a
 * migration (every table checked), plain `PRAGMA optimize` every few hours and before the connection closes.
 * `analysis_limit` bounds each ANALYZE to a sample of each index, so it takes milliseconds however large the
 * table. Without statistics SQLite reckons each equality and range on an index matches a handful of rows, and at
 * 1M tasks took the claiming index over the listing one for a page filtered by status, model and creation time
 * (docs/benchmarks.md#task-reads-at-1m-tasks).
 */
import type BetterSqlite3 from 'better-sqlite3';
import { pragma } from './sqlite-handles.js';

/** Rows of each index an ANALYZE reads (SQLite suggests 100 to 1000). */
export const ANALYSIS_LIMIT = 400;

/** How often a long-lived connection refreshes what changed ("perhaps once every few hours"). */
export const OPTIMIZE_INTERVAL_MS = 3 * 3_600_000;

/** `PRAGMA optimize` with every table checked, not only those this connection has queried. */
export const OPTIMIZE_ALL_TABLES = 'optimize = 0x10002';

/** On a connection just opened: its analysis limit, then statistics for whatever lacks them or has changed. */
export function optimizeOnOpen(database: BetterSqlite3.Database): void {
  pragma(database, `analysis_limit = ${ANALYSIS_LIMIT}`);
  pragma(database, OPTIMIZE_ALL_TABLES);
}

/** Runs `optimize` every `intervalMs` until stopped; the timer does not keep the process alive. */
export function optimizePeriodically(
  optimize: () => Promise<void>,
  options: { intervalMs?: number; onError?: (error: unknown) => void } = {},
): { stop(): void } {
  const timer = setInterval(() => {
    optimize().catch((error: unknown) => options.onError?.(error));
  }, options.intervalMs ?? OPTIMIZE_INTERVAL_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

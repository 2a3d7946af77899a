/**
 * Failures of the store or the storage that are neither the request's fault nor a bug: a resource ran out for
 * now. `no_space`: nothing more can be written (the disk is full, or the database server's); `busy`: the
 * database stayed locked by other writers past its wait. Adapters let their drivers' errors through unchanged,
 * and these are named from the codes better-sqlite3, pg and Node.js's file system give them, found anywhere
 * along an error's `cause` chain (a failure wraps the error that caused it).
 */
export type ResourceShortage = 'no_space' | 'busy';

export interface Shortage {
  readonly kind: ResourceShortage;
  /** The driver's code, for the log: `ENOSPC`, `SQLITE_FULL`, `SQLITE_BUSY`, PostgreSQL's `53100`. */
  readonly code: string;
}

/** ENOSPC and EDQUOT (a quota) from the file system, SQLITE_FULL, and PostgreSQL's disk_full. */
const NO_SPACE: ReadonlySet<string> = new Set(['ENOSPC', 'EDQUOT', 'SQLITE_FULL', '53100']);
/**
 * PostgreSQL's serialization_failure, deadlock_detected, lock_not_available and too_many_connections; SQLite's
 * SQLITE_BUSY and SQLITE_LOCKED with their extended codes (SQLITE_BUSY_SNAPSHOT, SQLITE_BUSY_TIMEOUT…).
 */
const BUSY: ReadonlySet<string> = new Set(['40001', '40P01', '55P03', '53300']);
const SQLITE_BUSY = /^SQLITE_(BUSY|LOCKED)/;

/** How far along `cause` to look: a chain is a few links long; a cycle must not loop. */
const MOST_CAUSES = 8;

export function resourceShortageOf(error: unknown): Shortage | undefined {
  let current = error;
  for (let depth = 0; current instanceof Error && depth < MOST_CAUSES; depth++) {
    const code = 'code' in current && typeof current.code === 'string' ? current.code : undefined;
    if (code !== undefined) {
      if (NO_SPACE.has(code)) return { kind: 'no_space', code };
      if (BUSY.has(code) || SQLITE_BUSY.test(code)) return { kind: 'busy', code };
    }
    current = current.cause;
  }
  return undefined;
}

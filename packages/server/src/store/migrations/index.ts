/**
 * The numbered migrations, listed statically: a bundled or compiled server has no migration folder to
 * scan, and the order must not depend on the file system.
 */
import { type Kysely, type Migration, type MigrationProvider, Migrator, type MigratorProps } from 'kysely';
import * as initial from './0001-initial.js';
import * as webhooks from './0002-webhooks.js';
import * as taskCallbackUrl from './0003-task-callback-url.js';
import * as idempotencyKeys from './0004-idempotency-keys.js';
import * as taskExpiryIndex from './0005-task-expiry-index.js';
import * as files from './0006-files.js';
import * as dashboard from './0007-dashboard.js';
import * as engineRouting from './0008-engine-routing.js';
import * as usageAndBudgets from './0009-usage-and-budgets.js';
import * as workers from './0010-workers.js';
import * as taskListIndexes from './0011-task-list-indexes.js';
import * as deliveryHostIndex from './0012-delivery-host-index.js';
import * as upstreamJobs from './0013-upstream-jobs.js';
import * as taskRevision from './0014-task-revision.js';
import * as deletedTaskUpstreamJobs from './0015-deleted-task-upstream-jobs.js';
import * as upstreamJobId from './0016-upstream-job-id.js';
import * as taskRunsAndCost from './0017-task-runs-and-cost.js';

export const MIGRATIONS: Readonly<Record<string, Migration>> = {
  '0001-initial': initial,
  '0002-webhooks': webhooks,
  '0003-task-callback-url': taskCallbackUrl,
  '0004-idempotency-keys': idempotencyKeys,
  '0005-task-expiry-index': taskExpiryIndex,
  '0006-files': files,
  '0007-dashboard': dashboard,
  '0008-engine-routing': engineRouting,
  '0009-usage-and-budgets': usageAndBudgets,
  '0010-workers': workers,
  '0011-task-list-indexes': taskListIndexes,
  '0012-delivery-host-index': deliveryHostIndex,
  '0013-upstream-jobs': upstreamJobs,
  '0014-task-revision': taskRevision,
  '0015-deleted-task-upstream-jobs': deletedTaskUpstreamJobs,
  '0016-upstream-job-id': upstreamJobId,
  '0017-task-runs-and-cost': taskRunsAndCost,
};

/** Whether `applied` (the names in Kysely's migration table) are exactly the migrations above: nothing to do. */
export function isUpToDate(applied: readonly string[]): boolean {
  const known = Object.keys(MIGRATIONS);
  return applied.length === known.length && known.every((name) => applied.includes(name));
}

const provider: MigrationProvider = {
  getMigrations: async () => ({ ...MIGRATIONS }),
};

/**
 * Applies every pending migration. `options` passes through to Kysely's `Migrator`; a PostgreSQL store kept
 * in a schema other than `public` needs `migrationTableSchema`, or Kysely may find another schema's
 * migration tables and skip creating its own.
 */
export async function migrateToLatest<DB>(
  db: Kysely<DB>,
  options: Omit<MigratorProps, 'db' | 'provider'> = {},
): Promise<void> {
  const { error, results } = await new Migrator({ ...options, db, provider }).migrateToLatest();
  if (error) {
    const failed = results?.find((result) => result.status === 'Error')?.migrationName;
    throw new Error(failed ? `Database migration ${failed} failed.` : 'Database migration failed.', {
      cause: error,
    });
  }
}

import type { Kysely } from 'kysely';
import type { ModelId } from '../../domain/models.js';
import type { Database } from '../database-schema.js';

/** Records (or renews) a running worker pool and its model IDs until `ttlMs` from now. */
export async function registerWorker(
  db: Kysely<Database>,
  id: string,
  models: readonly ModelId[],
  ttlMs: number,
  now: number,
): Promise<void> {
  const expiresAt = now + ttlMs;
  await db
    .insertInto('workers')
    .values({ id, models: JSON.stringify(models), started_at: now, seen_at: now, expires_at: expiresAt })
    .onConflict((conflict) =>
      conflict
        .column('id')
        .doUpdateSet({ models: JSON.stringify(models), seen_at: now, expires_at: expiresAt }),
    )
    .execute();
  // Rows of workers long gone would otherwise stay forever; an hour is plenty for anyone looking into one.
  await db
    .deleteFrom('workers')
    .where('expires_at', '<', now - 3_600_000)
    .execute();
}

import type { Kysely } from 'kysely';
import type { ModelId } from '../../domain/models.js';
import type { Database } from '../database-schema.js';

/** The model IDs some live worker serves. */
export async function servedModels(db: Kysely<Database>, now: number): Promise<Set<ModelId>> {
  const rows = await db.selectFrom('workers').select('models').where('expires_at', '>', now).execute();
  return new Set(rows.flatMap((row) => JSON.parse(row.models) as ModelId[]));
}

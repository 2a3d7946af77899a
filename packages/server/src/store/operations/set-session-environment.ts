import type { Kysely } from 'kysely';
import type { Environment } from '../../domain/task.js';
import type { Database } from '../database-schema.js';

export async function setSessionEnvironment(
  db: Kysely<Database>,
  tokenHash: string,
  environment: Environment,
): Promise<boolean> {
  const result = await db
    .updateTable('dashboard_sessions')
    .set({ environment })
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

import type { Kysely } from 'kysely';
import type { TaskScope } from '../../domain/task.js';
import type { FileRecord } from '../../domain/uploaded-file.js';
import type { Database } from '../database-schema.js';
import { toFileRecord } from '../file-row.js';

export async function getFile(
  db: Kysely<Database>,
  id: string,
  scope: TaskScope,
): Promise<FileRecord | undefined> {
  const row = await db
    .selectFrom('files')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', scope.accountId)
    .where('environment', '=', scope.environment)
    .executeTakeFirst();
  return row && toFileRecord(row);
}

import type { Kysely } from 'kysely';
import type { FileRecord } from '../../domain/uploaded-file.js';
import type { Database } from '../database-schema.js';
import { toFileRecord } from '../file-row.js';
import { isOneOf } from '../list-parameters.js';

/** Deletes up to `limit` uploaded files created before `createdBefore`, oldest first, and returns them. */
export async function deleteExpiredFiles(
  db: Kysely<Database>,
  createdBefore: number,
  limit: number,
): Promise<FileRecord[]> {
  return db.transaction().execute(async (trx) => {
    const rows = await trx
      .selectFrom('files')
      .selectAll()
      .where('created_at', '<', createdBefore)
      .orderBy('created_at')
      .limit(limit)
      .execute();
    if (rows.length === 0) return [];
    await trx
      .deleteFrom('files')
      .where((eb) =>
        isOneOf(
          trx,
          eb.ref('id'),
          rows.map((row) => row.id),
        ),
      )
      .execute();
    return rows.map(toFileRecord);
  });
}

import type { Kysely } from 'kysely';
import type { FileRecord } from '../../domain/uploaded-file.js';
import type { Database } from '../database-schema.js';
import { toFileRecord } from '../file-row.js';

export async function createFile(
  db: Kysely<Database>,
  file: Omit<FileRecord, 'createdAt'>,
  now: number,
): Promise<FileRecord> {
  const row = await db
    .insertInto('files')
    .values({
      id: file.id,
      account_id: file.accountId,
      environment: file.environment,
      kind: file.kind,
      content_type: file.contentType,
      filename: file.filename,
      bytes: file.bytes,
      created_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toFileRecord(row);
}

/** Row -> `FileRecord`. */
import type { Selectable } from 'kysely';
import type { FileRecord } from '../domain/uploaded-file.js';
import type { FilesTable } from './database-schema.js';
import { millis } from './task-row.js';

export function toFileRecord(row: Selectable<FilesTable>): FileRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    environment: row.environment,
    kind: row.kind,
    contentType: row.content_type,
    filename: row.filename,
    bytes: millis(row.bytes),
    createdAt: millis(row.created_at),
  };
}

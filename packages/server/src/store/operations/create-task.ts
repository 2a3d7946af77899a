import type { Kysely } from 'kysely';
import type { TaskRecord } from '../../domain/task.js';
import type { NewTask } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { toTaskRecord, toTaskRow } from '../task-row.js';

export async function createTask(db: Kysely<Database>, task: NewTask, now: number): Promise<TaskRecord> {
  const row = await db
    .insertInto('tasks')
    .values(toTaskRow(task, now))
    .returningAll()
    .executeTakeFirstOrThrow();
  return toTaskRecord(row);
}

/** Retention deletes final tasks by completion time (store/operations/delete-expired-tasks.ts). */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('tasks_completed').on('tasks').column('completed_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('tasks_completed').execute();
}

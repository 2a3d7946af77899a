/**
 * A task's revision (`TaskRecord.revision`): a number raised by one at every write of its status or progress, so
 * that its event stream can number its events (`id:`) the same in every process and across reconnections. Tasks
 * that exist already start at 1, as new ones do.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('tasks')
    .addColumn('revision', 'integer', (column) => column.notNull().defaultTo(sql.lit(1)))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tasks').dropColumn('revision').execute();
}

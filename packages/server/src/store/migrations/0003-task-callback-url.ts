/**
 * The task's `callback_url` in a column of its own (it stays in `params` too), so that a claim can tell in
 * SQL whether it must also queue a `task.processing` callback: claims of tasks without one then take a single
 * statement instead of a transaction (store/operations/claim-task.ts).
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tasks').addColumn('callback_url', 'text').execute();
  const rows = await sql<{ id: string; params: string }>`
    select id, params from tasks where params like ${'%"callback_url":"%'}`.execute(db);
  for (const row of rows.rows) {
    const url = (JSON.parse(row.params) as { callback_url?: string | null }).callback_url ?? null;
    await sql`update tasks set callback_url = ${url} where id = ${row.id}`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tasks').dropColumn('callback_url').execute();
}

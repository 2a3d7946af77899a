/**
 * `GET /v1/tasks` pages newest first by (created_at, id) within a scope, optionally of one status, one model or
 * both. An index with every equality of the page before both keys makes each page one range scan in index order,
 * however deep its cursor and wherever its last match: without `id`, SQLite sorted every page on it; with a filter
 * outside the index, a page read every task of the scope between its cursor and the next match (to the end of the
 * scope, to find that there was no 21st). They replace 0001's `tasks_account`, a prefix of the first.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('tasks_list')
    .on('tasks')
    .columns(['account_id', 'environment', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('tasks_list_status')
    .on('tasks')
    .columns(['account_id', 'environment', 'status', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('tasks_list_model')
    .on('tasks')
    .columns(['account_id', 'environment', 'model', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('tasks_list_status_model')
    .on('tasks')
    .columns(['account_id', 'environment', 'status', 'model', 'created_at', 'id'])
    .execute();
  await db.schema.dropIndex('tasks_account').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('tasks_account')
    .on('tasks')
    .columns(['account_id', 'environment', 'created_at'])
    .execute();
  for (const name of ['tasks_list_status_model', 'tasks_list_model', 'tasks_list_status', 'tasks_list']) {
    await db.schema.dropIndex(name).execute();
  }
}

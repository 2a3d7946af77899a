/**
 * Routing across engines (engines/engine-routes.ts): the engine a task is running on, so that claims can hold
 * each engine's `max_concurrency` across every worker and usage can name it; and the circuit breaker of each
 * engine, shared by every process.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tasks').addColumn('engine', 'text').execute();
  await db.schema
    .createTable('engine_circuits')
    .addColumn('engine', 'text', (col) => col.primaryKey())
    // Unavailability failures in a row since the last success.
    .addColumn('failures', 'integer', (col) => col.notNull())
    // While the circuit is open: the end of its cool-down.
    .addColumn('open_until', 'bigint')
    // After the cool-down: the one trial task's claim holds the engine until this.
    .addColumn('trial_until', 'bigint')
    .addColumn('updated_at', 'bigint', (col) => col.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('engine_circuits').execute();
  await db.schema.alterTable('tasks').dropColumn('engine').execute();
}

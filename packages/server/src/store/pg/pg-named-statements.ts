/**
 * Statements sent to PostgreSQL as named prepared statements: each connection parses and plans them once,
 * where Kysely's driver sends every statement unnamed, planned anew each time. Planning was most of the
 * server's part of the two statements on a task's way from creation to its engine (the one-statement creation
 * and claim: 0.6–0.9 ms of planning against 0.1–0.2 ms of execution;
 * docs/benchmarks.md#task-dispatch-against-graphile-worker-and-bullmq).
 *
 * Only statements whose text is fixed by the code are named (prepared-query.ts registers them), so the
 * statements a connection keeps are a set bounded by the code. Their result columns are listed, never `*`: a
 * prepared statement's result type is fixed when it is prepared, and PostgreSQL refuses to run one whose
 * table gained a column since ("cached plan must not change result type"), as after a migration run by a
 * newer process.
 */
import type pg from 'pg';

/** Statement text → its name, the same on every connection of the process. */
const names = new Map<string, string>();

/** Sends `sql` as a named prepared statement from now on (on PostgreSQL; other dialects never consult it). */
export function nameStatement(sql: string): void {
  if (!names.has(sql)) names.set(sql, `videogen_${names.size + 1}`);
}

type Query = (config: unknown, values?: unknown, callback?: unknown) => unknown;

/** Makes the pool's connections send the registered statements by name, as they connect. */
export function sendNamedStatements(pool: pg.Pool): void {
  pool.on('connect', (client) => {
    // The class's own `query`, looked up at each call rather than kept, so that whatever replaces it later (the
    // tests' statement recorder) still sees every statement.
    const own = () => (Object.getPrototypeOf(client) as { query: Query }).query;
    (client as unknown as { query: Query }).query = (config, values, callback) => {
      const name = typeof config === 'string' ? names.get(config) : undefined;
      return name === undefined
        ? own().call(client, config, values, callback)
        : own().call(client, { name, text: config, values }, callback);
    };
  });
}

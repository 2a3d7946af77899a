/**
 * A `Kysely<Database>` over a `pg.Pool`, optionally confined to one schema, and the migration lock; shared by
 * `PgStore`, `PgWorkSignal` and the tests.
 */
import { CompiledQuery, Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { Database } from '../database-schema.js';
import { sendNamedStatements } from './pg-named-statements.js';

export interface PgDatabaseOptions {
  /** `postgres://user:password@host:5432/database?…` */
  readonly connectionString: string;
  /**
   * Keep every table in this schema (created by `migrate` if missing) rather than the connection's default
   * (normally `public`): several installations, or test runs, can then share one database.
   */
  readonly schema?: string;
  /** Connections at most; default 10. */
  readonly poolSize?: number;
  /** Shown in `pg_stat_activity`; default `videogen`. */
  readonly applicationName?: string;
  /**
   * Told when an idle pooled connection fails (a server restart, `pg_terminate_backend`); the pool replaces
   * it by itself. Without a listener pg would crash the process.
   */
  readonly onError?: (error: Error) => void;
  /**
   * Commit without waiting for the WAL to reach disk (`synchronous_commit = off`): for the claims' own pool
   * only (pg-store.ts says why that is safe there).
   */
  readonly asynchronousCommit?: boolean;
}

export interface PgDatabase {
  readonly db: Kysely<Database>;
  readonly pool: pg.Pool;
}

/** PostgreSQL's identifier limit (NAMEDATALEN - 1), in bytes. */
const MAX_IDENTIFIER_BYTES = 63;

/** `"name"`, with embedded quotes doubled: for statements that take no parameters (`SET`, `LISTEN`). */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

export function checkSchemaName(schema: string): string {
  if (schema === '' || schema.includes('\0') || Buffer.byteLength(schema) > MAX_IDENTIFIER_BYTES) {
    throw new Error(`Invalid PostgreSQL schema name ${JSON.stringify(schema)}.`);
  }
  return schema;
}

/**
 * Every pooled connection starts with `SET search_path` to the schema, so unqualified names (the shared
 * operations, and raw SQL such as the 0002 migration's backfill) resolve there, and only there: a table
 * missing from the schema is an error rather than a silent read of `public`. It is done on connect rather than
 * through the startup `options` parameter because pg lets an `options` query parameter in the URL replace it.
 */
export function openPgDatabase(options: PgDatabaseOptions): PgDatabase {
  const schema = options.schema === undefined ? undefined : checkSchemaName(options.schema);
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.poolSize ?? 10,
    application_name: options.applicationName ?? 'videogen',
  });
  pool.on('error', (error) => options.onError?.(error));
  // pg-pool listens for a client's errors only while it is idle: a connection reset while Kysely holds the
  // client (a query or a transaction under way) emits 'error' on it with nobody listening, which ends the process.
  // The query itself rejects, and the pool drops the broken client when it is released.
  pool.on('connect', (client) => client.on('error', (error) => options.onError?.(error)));
  sendNamedStatements(pool);
  const settings = [
    ...(schema === undefined ? [] : [`set search_path to ${quoteIdentifier(schema)}`]),
    ...(options.asynchronousCommit ? ['set synchronous_commit to off'] : []),
  ];
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({
      pool,
      ...(settings.length > 0 && {
        onCreateConnection: async (connection) => {
          for (const setting of settings) await connection.executeQuery(CompiledQuery.raw(setting));
        },
      }),
    }),
  });
  return { db, pool };
}

/**
 * The session-level advisory lock every `PgStore.migrate` holds, one per database whatever the schema (its
 * key is the first 8 bytes of sha256("videogen:migrate") as a signed bigint). Database-wide on purpose: Kysely's
 * migrator introspects every schema's tables, which fails if another session drops a schema at that moment, so
 * whoever drops a videogen schema (the tests' cleanup) takes this lock too.
 */
export const MIGRATION_LOCK_KEY = '-3260903921439347770';

/** Runs `action` holding `MIGRATION_LOCK_KEY` on `db`, which must be bound to one connection. */
export async function withMigrationLock<T, DB>(db: Kysely<DB>, action: () => Promise<T>): Promise<T> {
  await sql`select pg_advisory_lock(${MIGRATION_LOCK_KEY}::bigint)`.execute(db);
  let result: T;
  try {
    result = await action();
  } catch (error) {
    // The action's error is the news; if the connection broke, the session and its lock are gone anyway.
    await sql`select pg_advisory_unlock(${MIGRATION_LOCK_KEY}::bigint)`.execute(db).catch(() => undefined);
    throw error;
  }
  await sql`select pg_advisory_unlock(${MIGRATION_LOCK_KEY}::bigint)`.execute(db);
  return result;
}

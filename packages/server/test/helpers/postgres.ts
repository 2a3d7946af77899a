/**
 * PostgreSQL for tests: where it is, whether the suites that need it run, and a fresh schema per store.
 *
 * Locally a missing server skips those suites with a message saying how to run them; in CI (`CI=true`) it is a
 * failure, so a broken database service can never pass for a green run.
 */
import { randomBytes } from 'node:crypto';
import { after, test } from 'node:test';
import pg from 'pg';
import { MIGRATION_LOCK_KEY, quoteIdentifier } from '../../src/store/pg/pg-database.js';

export const TEST_DATABASE_URL =
  process.env.VIDEOGEN_TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

/** The URL without its password, for messages. */
function shown(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.href;
  } catch {
    return '(an unparsable URL)';
  }
}

async function reachable(url: string): Promise<Error | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('select 1');
    return undefined;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  } finally {
    await client.end().catch(() => undefined);
  }
}

let checked: Promise<{ skip: string | false }> | undefined;

/**
 * `describe` options for suites that need PostgreSQL: `{ skip: false }` when it answers. When it does not,
 * outside CI the suites are skipped with the reason; in CI one test fails saying what was unreachable (and
 * the suites are skipped, so that the failure is that one clear message rather than each test's).
 * In CI the server gets a few seconds, since a database service may still be starting.
 */
export function postgresSuite(): Promise<{ skip: string | false }> {
  checked ??= (async () => {
    const ci = process.env.CI === 'true';
    const deadline = Date.now() + (ci ? 15_000 : 0);
    let error = await reachable(TEST_DATABASE_URL);
    while (error && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      error = await reachable(TEST_DATABASE_URL);
    }
    if (!error) return { skip: false };
    const problem = `PostgreSQL at ${shown(TEST_DATABASE_URL)} is unreachable (${error.message})`;
    if (ci) {
      test('PostgreSQL is reachable (CI=true requires it)', () => {
        throw new Error(`${problem}. Start it, or point VIDEOGEN_TEST_DATABASE_URL at one.`);
      });
      return { skip: `${problem}; failing, since CI=true` };
    }
    return {
      skip: `${problem}; start one or set VIDEOGEN_TEST_DATABASE_URL to run these tests (CI=true fails instead)`,
    };
  })();
  return checked;
}

/** PostgreSQL's `deadlock_detected`: it aborted this statement to let another transaction go on. */
const DEADLOCK_DETECTED = '40P01';

/**
 * Drops a schema and everything in it. A process still working in the schema (a server a suite has not
 * stopped yet, a pool's last statements) can lock its tables in another order than the cascade does; PostgreSQL
 * then aborts one side, and when that is the drop, it is tried again.
 */
async function dropSchema(client: pg.Client, name: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await client.query(`drop schema if exists ${quoteIdentifier(name)} cascade`);
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== DEADLOCK_DETECTED || attempt === 5) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    }
  }
}

/**
 * Names of fresh schemas (`vg_test_<random>`), each dropped with everything in it when the enclosing suite
 * (or the file) ends. The stores create them on `migrate`. Drops take the stores' migration lock: Kysely's
 * migrator introspects every schema, and fails if one vanishes under it.
 */
export function freshSchemas(): () => string {
  const names: string[] = [];
  after(async () => {
    if (names.length === 0) return;
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    client.on('error', () => undefined);
    await client.connect();
    try {
      await client.query('select pg_advisory_lock($1::bigint)', [MIGRATION_LOCK_KEY]);
      for (const name of names.splice(0)) await dropSchema(client, name);
      await client.query('select pg_advisory_unlock($1::bigint)', [MIGRATION_LOCK_KEY]);
    } finally {
      await client.end();
    }
  });
  return () => {
    const name = `vg_test_${randomBytes(6).toString('hex')}`;
    names.push(name);
    return name;
  };
}

/** Lends schemas to one store at a time, each given back emptied (its migrations kept). */
export interface SchemaLender {
  /** An emptied schema no store holds, else a fresh one. */
  lend(): string;
  /** Deletes every row but the migrations' and lends the schema again. */
  giveBack(name: string): Promise<void>;
}

/**
 * Schemas for suites whose every test wants an empty store of its own: a fresh schema costs its test a
 * migration (0.2-1 s, most of it Kysely reading every table of every schema in the database, under the
 * database-wide migration lock); an emptied one costs a few deletes. Rows are deleted rather than truncated
 * (TRUNCATE makes new files for every table: 0.2 s), children before the tables they reference.
 */
export function schemaLender(): SchemaLender {
  const fresh = freshSchemas();
  const emptied: string[] = [];
  /** Per schema, its deletes in one string: one round trip, run as one transaction. */
  const emptyings = new Map<string, string>();
  let client: pg.Client | undefined;
  after(async () => {
    await client?.end();
  });
  return {
    lend: () => emptied.pop() ?? fresh(),
    async giveBack(name) {
      if (!client) {
        client = new pg.Client({ connectionString: TEST_DATABASE_URL });
        client.on('error', () => undefined);
        await client.connect();
      }
      let emptying = emptyings.get(name);
      if (!emptying) {
        const { rows } = await client.query<{ name: string; parents: string[] }>(
          `select c.relname as name,
                  array(select p.relname from pg_constraint k join pg_class p on p.oid = k.confrelid
                         where k.conrelid = c.oid and k.contype = 'f' and k.confrelid <> c.oid) as parents
             from pg_class c join pg_namespace n on n.oid = c.relnamespace
            where n.nspname = $1 and c.relkind = 'r' and c.relname not like 'kysely\\_%'`,
          [name],
        );
        emptying = childrenFirst(rows)
          .map((table) => `delete from ${quoteIdentifier(name)}.${quoteIdentifier(table)};`)
          .join('\n');
        // A schema its store never migrated has no tables yet: read them again next time.
        if (rows.length > 0) emptyings.set(name, emptying);
      }
      await client.query(emptying);
      emptied.push(name);
    },
  };
}

/** The tables ordered so that each comes before every table it references. */
function childrenFirst(tables: readonly { name: string; parents: readonly string[] }[]): string[] {
  const order: string[] = [];
  const placed = new Set<string>();
  const place = (name: string) => {
    if (placed.has(name)) return;
    placed.add(name);
    for (const child of tables.filter((table) => table.parents.includes(name))) place(child.name);
    order.push(name);
  };
  for (const table of tables) place(table.name);
  return order;
}

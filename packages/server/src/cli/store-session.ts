/**
 * What the store-backed commands share: a migrated store for one action. Commands that read the server's store
 * refuse to run without one, rather than start a new, empty store whose secrets and keys mean nothing to the
 * server; commands that create an account or a key may start one, and say so.
 */
import { existsSync } from 'node:fs';
import { openStore } from '../adapters.js';
import { type Config, loadConfig } from '../config.js';
import type { Store } from '../ports/store.js';
import { securePrivateFiles, sqliteFile } from '../process/private-files.js';

/** `read`: the store must exist and hold an account. `create`: a missing store is created. */
export type StoreUse = 'read' | 'create';

/** The store `config` names, for messages: the SQLite file, or the PostgreSQL URL without its password. */
export function describeStore(config: Pick<Config, 'databaseUrl' | 'databaseSchema'>): string {
  const file = sqliteFile(config.databaseUrl);
  if (file) return file;
  let url: URL;
  try {
    url = new URL(config.databaseUrl);
  } catch {
    return config.databaseUrl;
  }
  if (url.password) url.password = '***';
  return `${url.href}${config.databaseSchema ? ` (schema ${config.databaseSchema})` : ''}`;
}

const WHERE_TO_LOOK =
  'run the command where the server runs, with its VIDEOGEN_DATA_DIR (or VIDEOGEN_DATABASE_URL)';

export async function withStore<T>(use: StoreUse, action: (store: Store) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const where = describeStore(config);
  const file = sqliteFile(config.databaseUrl);
  if (use === 'read' && file && !existsSync(file)) {
    throw new Error(`no store at ${where}; ${WHERE_TO_LOOK}`);
  }
  // Not the file storage's folder: these commands do not use it.
  await securePrivateFiles({ dataDir: config.dataDir, databaseUrl: config.databaseUrl }, (message) =>
    process.stderr.write(`videogen: warning: ${message}\n`),
  );
  const store = await openStore(config.databaseUrl, { schema: config.databaseSchema });
  try {
    // Before migrating, which would make the tables of a new store.
    const found = await store.countAccounts().then(
      (count) => ({ count, problem: undefined }),
      (error: unknown) => ({ count: 0, problem: error instanceof Error ? error.message : String(error) }),
    );
    if (use === 'read' && found.count === 0) {
      throw new Error(
        found.problem
          ? `no videogen store at ${where} (${found.problem}); ${WHERE_TO_LOOK}`
          : `the store at ${where} holds no account yet; ${WHERE_TO_LOOK}`,
      );
    }
    await store.migrate();
    const result = await action(store);
    if (found.count === 0) {
      process.stderr.write(
        `videogen: the store at ${where} was new; if the server uses another, ${WHERE_TO_LOOK}\n`,
      );
    }
    return result;
  } finally {
    await store.close();
  }
}

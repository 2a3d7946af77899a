/** Picks the `Store` and `Storage` implementations named by `VIDEOGEN_DATABASE_URL` and `VIDEOGEN_STORAGE_URL`. */
import { fileURLToPath } from 'node:url';
import { ConfigError } from './config.js';
import type { Storage } from './ports/storage.js';
import type { Store } from './ports/store.js';
import { FileStorage } from './storage/file-storage.js';
import { SqliteStore } from './store/sqlite-store.js';

export function openStore(databaseUrl: string): Store {
  if (/^postgres(ql)?:\/\//i.test(databaseUrl)) {
    throw new ConfigError(
      'VIDEOGEN_DATABASE_URL',
      'PostgreSQL is not supported by this version yet; use a SQLite path.',
    );
  }
  const path = databaseUrl.startsWith('sqlite:') ? databaseUrl.slice('sqlite:'.length) : databaseUrl;
  return new SqliteStore({ path });
}

export function openStorage(storageUrl: string): Storage {
  if (storageUrl.startsWith('file:')) return new FileStorage({ root: fileURLToPath(storageUrl) });
  throw new ConfigError(
    'VIDEOGEN_STORAGE_URL',
    `unsupported storage ${JSON.stringify(storageUrl)}; use file:///path.`,
  );
}

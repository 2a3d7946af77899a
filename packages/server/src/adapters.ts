/**
 * Picks the `Store`, `WorkSignal` and `Storage` implementations named by `VIDEOGEN_DATABASE_URL` and
 * `VIDEOGEN_STORAGE_URL`.
 */
import { fileURLToPath } from 'node:url';
import { ConfigError } from './config.js';
import type { Storage } from './ports/storage.js';
import type { Store } from './ports/store.js';
import type { WorkSignal } from './ports/work-signal.js';
import { FileStorage } from './storage/file-storage.js';
import { LocalWorkSignal } from './store/local-work-signal.js';
import { PgStore } from './store/pg-store.js';
import { SqliteStore } from './store/sqlite-store.js';

export interface StoreOptions {
  /** `VIDEOGEN_DATABASE_SCHEMA`: PostgreSQL only. */
  readonly schema?: string | undefined;
  /** Told about connection failures the store recovers from by itself. */
  readonly onError?: (error: unknown) => void;
}

export function isPostgresUrl(databaseUrl: string): boolean {
  return /^postgres(ql)?:\/\//i.test(databaseUrl);
}

export function openStore(databaseUrl: string, options: StoreOptions = {}): Store {
  if (isPostgresUrl(databaseUrl)) {
    return new PgStore({
      connectionString: databaseUrl,
      ...(options.schema ? { schema: options.schema } : {}),
      ...(options.onError ? { onError: options.onError } : {}),
    });
  }
  if (options.schema) {
    throw new ConfigError('VIDEOGEN_DATABASE_SCHEMA', 'applies to PostgreSQL only; unset it for SQLite.');
  }
  const path = databaseUrl.startsWith('sqlite:') ? databaseUrl.slice('sqlite:'.length) : databaseUrl;
  return new SqliteStore({ path });
}

/** PostgreSQL LISTEN/NOTIFY across processes; in-process for SQLite, whose claimers share one process. */
export function openWorkSignal(store: Store, options: Pick<StoreOptions, 'onError'> = {}): WorkSignal {
  const onError = options.onError ? { onError: options.onError } : {};
  return store instanceof PgStore ? store.createWorkSignal(onError) : new LocalWorkSignal(onError);
}

export function openStorage(storageUrl: string): Storage {
  if (storageUrl.startsWith('file:')) return new FileStorage({ root: fileURLToPath(storageUrl) });
  throw new ConfigError(
    'VIDEOGEN_STORAGE_URL',
    `unsupported storage ${JSON.stringify(storageUrl)}; use file:///path.`,
  );
}

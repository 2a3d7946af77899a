/**
 * Picks the `Store`, `WorkSignal` and `Storage` implementations named by `VIDEOGEN_DATABASE_URL` and
 * `VIDEOGEN_STORAGE_URL`, and the engines of `VIDEOGEN_ENGINES_FILE`. PostgreSQL's and S3's modules are
 * imported only when named: pg and the AWS SDK are about 40 MB of a process's memory that the default
 * installation (SQLite, local files) does not use.
 */
import { fileURLToPath } from 'node:url';
import { type Config, ConfigError } from './config.js';
import { createEngines, routeEngines } from './engines/create-engines.js';
import { defaultEnginesConfig, type EnginesConfig, loadEnginesFile } from './engines/engines-file.js';
import { createOutboundAgent } from './outbound/outbound-agent.js';
import type { Engine } from './ports/engine.js';
import type { EngineRouter } from './ports/engine-router.js';
import type { Storage } from './ports/storage.js';
import type { Store } from './ports/store.js';
import type { WorkSignal } from './ports/work-signal.js';
import { FileStorage } from './storage/file-storage.js';
import { MAX_PRESIGN_SECONDS } from './storage/presign-limit.js';
import { LocalWorkSignal } from './store/local-work-signal.js';
import { SqliteStore } from './store/sqlite/sqlite-store.js';
import { presignedResultUrl, type ResultLinks, type ResultUrl } from './tasks/result-links.js';

export interface StoreOptions {
  /** `VIDEOGEN_DATABASE_SCHEMA`: PostgreSQL only. */
  readonly schema?: string | undefined;
  /** Told about connection failures the store recovers from by itself. */
  readonly onError?: (error: unknown) => void;
  /** The store's clock (epoch ms): tests move it to expire leases and cached API keys without waiting. */
  readonly now?: () => number;
  /** SQLite: checkpoint the WAL from a worker thread (the server; sqlite-checkpointer.ts). */
  readonly checkpointInBackground?: boolean;
}

function isPostgresUrl(databaseUrl: string): boolean {
  return /^postgres(ql)?:\/\//i.test(databaseUrl);
}

export async function openStore(databaseUrl: string, options: StoreOptions = {}): Promise<Store> {
  if (isPostgresUrl(databaseUrl)) {
    const { PgStore } = await import('./store/pg/pg-store.js');
    return new PgStore({
      connectionString: databaseUrl,
      ...(options.schema ? { schema: options.schema } : {}),
      ...(options.onError ? { onError: options.onError } : {}),
      ...(options.now ? { now: options.now } : {}),
    });
  }
  if (options.schema) {
    throw new ConfigError('VIDEOGEN_DATABASE_SCHEMA', 'applies to PostgreSQL only; unset it for SQLite.');
  }
  const path = databaseUrl.startsWith('sqlite:') ? databaseUrl.slice('sqlite:'.length) : databaseUrl;
  return new SqliteStore({
    path,
    ...(options.now ? { now: options.now } : {}),
    ...(options.checkpointInBackground ? { checkpointInBackground: true } : {}),
    ...(options.onError ? { onError: options.onError } : {}),
  });
}

/** PostgreSQL LISTEN/NOTIFY across processes; in-process for SQLite, whose claimers share one process. */
export function openWorkSignal(store: Store, options: Pick<StoreOptions, 'onError'> = {}): WorkSignal {
  const onError = options.onError ? { onError: options.onError } : {};
  return store.createWorkSignal?.(onError) ?? new LocalWorkSignal(onError);
}

/** The storage; object storage is checked at once, so a wrong bucket fails the start, not the first request. */
export async function openStorage(storageUrl: string): Promise<Storage> {
  if (storageUrl.startsWith('file:')) return new FileStorage({ root: fileURLToPath(storageUrl) });
  if (storageUrl.startsWith('s3:')) {
    const { openS3Storage } = await import('./storage/s3-storage.js');
    try {
      const storage = openS3Storage(storageUrl);
      await storage.checkBucket();
      return storage;
    } catch (error) {
      throw new ConfigError('VIDEOGEN_STORAGE_URL', error instanceof Error ? error.message : String(error));
    }
  }
  throw new ConfigError(
    'VIDEOGEN_STORAGE_URL',
    `unsupported storage ${JSON.stringify(storageUrl)}; use file:///path or s3://bucket/prefix.`,
  );
}

/**
 * The links `results[0]` carries: presigned by the storage, or this server's own
 * (docs/decisions.md#result-videos).
 */
export function openResultUrls(config: Config, storage: Storage, links: ResultLinks): ResultUrl {
  const mode = config.resultLinks ?? (storage.presignedUrl ? 'storage' : 'server');
  if (mode === 'server') return links.resultUrl;
  const { presignedUrl } = storage;
  if (!presignedUrl) {
    throw new ConfigError(
      'VIDEOGEN_RESULT_LINKS',
      'storage links need object storage (VIDEOGEN_STORAGE_URL=s3://…).',
    );
  }
  // Presigned URLs are signed at the start of the hour and must still be valid at its end.
  if (config.resultUrlTtlSeconds + 3600 > MAX_PRESIGN_SECONDS) {
    throw new ConfigError(
      'VIDEOGEN_RESULT_URL_TTL_SECONDS',
      `presigned links last at most ${MAX_PRESIGN_SECONDS - 3600} s (7 days less an hour); lower it or set VIDEOGEN_RESULT_LINKS=server.`,
    );
  }
  return presignedResultUrl({ presignedUrl: presignedUrl.bind(storage) }, config.resultUrlTtlSeconds);
}

export interface OpenedEngines {
  readonly config: EnginesConfig;
  /** By name. */
  readonly engines: ReadonlyMap<string, Engine>;
  /** By model ID: the model IDs this process's workers claim. */
  readonly router: EngineRouter;
  /** Closes the connections the engines keep to their model servers and providers. */
  close(): Promise<void>;
}

/** The engines file `VIDEOGEN_ENGINES_FILE`, checked, or all six model IDs to the local engine. */
export function loadEnginesConfig(config: Pick<Config, 'enginesFile'>): EnginesConfig {
  return config.enginesFile ? loadEnginesFile(config.enginesFile) : defaultEnginesConfig();
}

/**
 * The engines of `VIDEOGEN_ENGINES_FILE`, or the local engine for all six model IDs; those with `callbacks: true`
 * are called back under `publicUrl` (`VIDEOGEN_PUBLIC_URL`).
 */
export function openEngines(enginesConfig: EnginesConfig, publicUrl?: string): OpenedEngines {
  const dispatcher = createOutboundAgent();
  const engines = createEngines(enginesConfig, { dispatcher, ...(publicUrl && { publicUrl }) });
  return {
    config: enginesConfig,
    engines,
    router: routeEngines(enginesConfig, engines),
    close: () => dispatcher.close(),
  };
}

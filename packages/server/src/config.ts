/** Configuration from `VIDEOGEN_*` environment variables, checked once at start with errors that name the variable. */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** What a process does: serve the API (and send callbacks), run render workers, or both. */
export const ROLES = ['all', 'api', 'worker'] as const;
export type Role = (typeof ROLES)[number];

/** How long the HTTP server waits on a client, in ms. */
export interface HttpTimeouts {
  /** The request line and headers must arrive within this, or the answer is 408 `request_timeout`. */
  readonly headersMs: number;
  /** The whole request, body included, must arrive within this, or 408 `request_timeout`; 0: no limit. */
  readonly requestMs: number;
  /** An idle keep-alive connection is closed after this. */
  readonly keepAliveMs: number;
  /** A connection without traffic either way (a client that stopped reading an answer) is closed after this; 0: never. */
  readonly idleMs: number;
}

/** How many task event streams may be open at once, and for how long each (http/event-stream-slots.ts). */
export interface EventStreamLimits {
  /** Streams open at once per API key (or dashboard session); 0: no cap. */
  readonly perKey: number;
  /** Streams open at once in this process; 0: no cap. */
  readonly perProcess: number;
  /** How long a stream lasts at most, in ms (a random tenth less, so streams opened together end apart). */
  readonly lifetimeMs: number;
}

/** The longest `Prefer: wait` (`MAX_WAIT_SECONDS` in http/prefer-wait.ts): an answer may be silent this long. */
const LONGEST_WAIT_SECONDS = 60;

export interface Config {
  readonly role: Role;
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  /** Base of absolute URLs handed to clients; derived from host and port when unset. */
  readonly publicUrl: string | undefined;
  readonly dataDir: string;
  readonly databaseUrl: string;
  /** PostgreSQL: the schema holding videogen's tables (created if missing); the connection's default if unset. */
  readonly databaseSchema: string | undefined;
  readonly storageUrl: string;
  readonly workerConcurrency: number;
  readonly leaseMs: number;
  readonly maxAttempts: number;
  readonly taskTimeoutMs: number;
  readonly resultUrlTtlSeconds: number;
  /**
   * `server`: links to this server's `/v1/results/…`; `storage`: URLs presigned by the storage (S3), fetched
   * from the bucket directly. Unset: `storage` when the storage can presign, else `server`.
   */
  readonly resultLinks: 'server' | 'storage' | undefined;
  readonly allowPrivateNetworks: boolean;
  readonly assetMaxBytes: number;
  readonly assetTimeoutMs: number;
  /** Largest request body of task creation (inline `data:` assets count). */
  readonly maxBodyBytes: number;
  /** Largest request body of every other route. */
  readonly maxOtherBodyBytes: number;
  /**
   * Bodies larger than `maxOtherBodyBytes` held at once, and their bytes together; past either, `503 overloaded`
   * (http/bodies-in-flight.ts).
   */
  readonly bodiesInFlight: { readonly maxBodies: number; readonly maxBytes: number };
  readonly httpTimeouts: HttpTimeouts;
  /** Requests per API key per minute; 0 turns the rate limit off. */
  readonly rateLimitPerMinute: number;
  /** The rate limit counts in fixed windows this long, each admitting the per-minute rate scaled to it. */
  readonly rateLimitWindowMs: number;
  /** Dashboard sign-in attempts per client address a minute, per process; 0: no limit. */
  readonly signInAttemptsPerMinute: number;
  /** Task creation answers 503 `overloaded` while this many tasks are pending; 0: no cap. */
  readonly maxQueuedTasks: number;
  /** An account's tasks beyond this many `processing` wait, pending, for one to end; 0: no cap. */
  readonly maxActiveTasksPerAccount: number;
  readonly eventStreams: EventStreamLimits;
  readonly webhookTimeoutMs: number;
  readonly webhookConcurrency: number;
  readonly webhookHostConcurrency: number;
  readonly shutdownGraceMs: number;
  readonly logLevel: string;
  /** Which engine renders each model ID (engines/engines-file.ts); all six to `local` when unset. */
  readonly enginesFile: string | undefined;
  /** Final tasks and their files are deleted this many days after they ended; 0 keeps them. */
  readonly retentionDays: number;
}

export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`${variable}: ${problem}`);
    this.name = 'ConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

function integer(
  env: Env,
  name: string,
  fallback: number,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(name, `expected an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  }
  return value;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(name, `expected true or false, got ${JSON.stringify(raw)}`);
}

function oneOf<T extends string>(env: Env, name: string, values: readonly T[]): T | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (!(values as readonly string[]).includes(raw)) {
    throw new ConfigError(name, `expected one of ${values.join(', ')}, got ${JSON.stringify(raw)}`);
  }
  return raw as T;
}

function role(env: Env): Role {
  const raw = env.VIDEOGEN_ROLE;
  if (raw === undefined || raw === '') return 'all';
  if (!(ROLES as readonly string[]).includes(raw)) {
    throw new ConfigError('VIDEOGEN_ROLE', `expected one of ${ROLES.join(', ')}, got ${JSON.stringify(raw)}`);
  }
  return raw as Role;
}

function url(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  try {
    const parsed = new URL(raw);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not http(s)');
  } catch {
    throw new ConfigError(name, `expected an http(s) URL, got ${JSON.stringify(raw)}`);
  }
  return raw.replace(/\/+$/, '');
}

const MIB = 1024 * 1024;

function httpTimeouts(env: Env): HttpTimeouts {
  const request = integer(env, 'VIDEOGEN_REQUEST_TIMEOUT_SECONDS', 300, 0, 86_400);
  const headers = integer(env, 'VIDEOGEN_HEADERS_TIMEOUT_SECONDS', Math.min(30, request || 30), 1, 3600);
  // Node refuses a headers timeout longer than the request timeout, which includes the headers.
  if (request > 0 && headers > request) {
    throw new ConfigError(
      'VIDEOGEN_HEADERS_TIMEOUT_SECONDS',
      `must not exceed VIDEOGEN_REQUEST_TIMEOUT_SECONDS (${request}), got ${headers}`,
    );
  }
  const idle = integer(env, 'VIDEOGEN_IDLE_TIMEOUT_SECONDS', 120, 0, 86_400);
  if (idle > 0 && idle <= LONGEST_WAIT_SECONDS) {
    throw new ConfigError(
      'VIDEOGEN_IDLE_TIMEOUT_SECONDS',
      `expected 0 (never) or more than ${LONGEST_WAIT_SECONDS} (the longest Prefer: wait), got ${idle}`,
    );
  }
  return {
    headersMs: headers * 1000,
    requestMs: request * 1000,
    keepAliveMs: integer(env, 'VIDEOGEN_KEEP_ALIVE_TIMEOUT_SECONDS', 72, 1, 3600) * 1000,
    idleMs: idle * 1000,
  };
}

export function loadConfig(env: Env = process.env, cwd: string = process.cwd()): Config {
  const dataDir = resolve(cwd, env.VIDEOGEN_DATA_DIR || 'data');
  return {
    role: role(env),
    host: env.VIDEOGEN_HOST || '127.0.0.1',
    port: integer(env, 'VIDEOGEN_PORT', 8080, 0, 65535),
    publicUrl: url(env, 'VIDEOGEN_PUBLIC_URL'),
    dataDir,
    databaseUrl: env.VIDEOGEN_DATABASE_URL || resolve(dataDir, 'videogen.db'),
    databaseSchema: env.VIDEOGEN_DATABASE_SCHEMA || undefined,
    storageUrl: env.VIDEOGEN_STORAGE_URL || pathToFileURL(resolve(dataDir, 'files')).href,
    workerConcurrency: integer(env, 'VIDEOGEN_WORKER_CONCURRENCY', 1, 0, 64),
    leaseMs: integer(env, 'VIDEOGEN_LEASE_SECONDS', 30, 1, 3600) * 1000,
    maxAttempts: integer(env, 'VIDEOGEN_MAX_ATTEMPTS', 3, 1, 100),
    taskTimeoutMs: integer(env, 'VIDEOGEN_TASK_TIMEOUT_SECONDS', 900, 1) * 1000,
    resultUrlTtlSeconds: integer(env, 'VIDEOGEN_RESULT_URL_TTL_SECONDS', 86_400, 60),
    resultLinks: oneOf(env, 'VIDEOGEN_RESULT_LINKS', ['server', 'storage'] as const),
    allowPrivateNetworks: boolean(env, 'VIDEOGEN_ALLOW_PRIVATE_NETWORKS', false),
    assetMaxBytes: integer(env, 'VIDEOGEN_ASSET_MAX_MB', 50, 1, 10_240) * MIB,
    assetTimeoutMs: integer(env, 'VIDEOGEN_ASSET_TIMEOUT_SECONDS', 60, 1, 3600) * 1000,
    maxBodyBytes: integer(env, 'VIDEOGEN_MAX_BODY_MB', 20, 1, 1024) * MIB,
    maxOtherBodyBytes: integer(env, 'VIDEOGEN_MAX_OTHER_BODY_KB', 64, 1, 1024 * 1024) * 1024,
    bodiesInFlight: {
      maxBodies: integer(env, 'VIDEOGEN_MAX_BODIES_IN_FLIGHT', 64, 1, 100_000),
      maxBytes: integer(env, 'VIDEOGEN_MAX_BODY_MB_IN_FLIGHT', 256, 1, 1024 * 1024) * MIB,
    },
    httpTimeouts: httpTimeouts(env),
    rateLimitPerMinute: integer(env, 'VIDEOGEN_RATE_LIMIT_PER_MINUTE', 600, 0),
    rateLimitWindowMs: integer(env, 'VIDEOGEN_RATE_LIMIT_WINDOW_SECONDS', 60, 1, 3600) * 1000,
    signInAttemptsPerMinute: integer(env, 'VIDEOGEN_SIGN_IN_ATTEMPTS_PER_MINUTE', 30, 0),
    maxQueuedTasks: integer(env, 'VIDEOGEN_MAX_QUEUED_TASKS', 10_000, 0),
    maxActiveTasksPerAccount: integer(env, 'VIDEOGEN_MAX_ACTIVE_TASKS_PER_ACCOUNT', 0, 0),
    eventStreams: {
      perKey: integer(env, 'VIDEOGEN_EVENT_STREAMS_PER_KEY', 100, 0),
      perProcess: integer(env, 'VIDEOGEN_EVENT_STREAMS_PER_PROCESS', 1000, 0),
      lifetimeMs: integer(env, 'VIDEOGEN_EVENT_STREAM_LIFETIME_SECONDS', 600, 1, 86_400) * 1000,
    },
    webhookTimeoutMs: integer(env, 'VIDEOGEN_WEBHOOK_TIMEOUT_SECONDS', 15, 1, 300) * 1000,
    webhookConcurrency: integer(env, 'VIDEOGEN_WEBHOOK_CONCURRENCY', 64, 1, 1024),
    webhookHostConcurrency: integer(env, 'VIDEOGEN_WEBHOOK_HOST_CONCURRENCY', 4, 1, 1024),
    shutdownGraceMs: integer(env, 'VIDEOGEN_SHUTDOWN_GRACE_SECONDS', 20, 0, 3600) * 1000,
    logLevel: env.VIDEOGEN_LOG_LEVEL || 'info',
    enginesFile: env.VIDEOGEN_ENGINES_FILE ? resolve(env.VIDEOGEN_ENGINES_FILE) : undefined,
    retentionDays: integer(env, 'VIDEOGEN_RETENTION_DAYS', 7, 0, 36_500),
  };
}

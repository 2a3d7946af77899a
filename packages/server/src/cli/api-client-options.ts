/**
 * What the API commands (`generate`, `tasks`) share: the `--url`, `--api-key` and `--json` flags, the client
 * they configure (flags first, then `VIDEOGEN_URL`, `VIDEOGEN_PORT` and `VIDEOGEN_API_KEY`), and API errors
 * as one line with their code.
 */
import { DEFAULT_BASE_URL, type Task, VideogenClient, VideogenError } from '@videogen/client';
import { UsageError } from './usage-error.js';

export const API_CLIENT_OPTIONS = {
  url: { type: 'string' },
  /** The former name of `--url`. */
  'base-url': { type: 'string' },
  'api-key': { type: 'string' },
  json: { type: 'boolean', default: false },
} as const;

export interface ApiClientFlags {
  readonly url?: string;
  readonly 'base-url'?: string;
  readonly 'api-key'?: string;
}

/**
 * The server's address: `--url`, else `VIDEOGEN_URL`, else the local server `VIDEOGEN_PORT` says it listens on,
 * else http://localhost:8080. `--base-url` and `VIDEOGEN_BASE_URL`, the former names, still work, with a
 * warning passed to `warn`.
 */
export function serverUrlFrom(
  flags: Pick<ApiClientFlags, 'url' | 'base-url'>,
  env: NodeJS.ProcessEnv,
  warn: (message: string) => void,
): string {
  const given =
    preferred(['--url', flags.url], ['--base-url', flags['base-url']], warn) ??
    preferred(['VIDEOGEN_URL', env.VIDEOGEN_URL], ['VIDEOGEN_BASE_URL', env.VIDEOGEN_BASE_URL], warn);
  if (given) return checkedUrl(given.value, given.source);
  const port = env.VIDEOGEN_PORT;
  if (!port) return DEFAULT_BASE_URL;
  if (!/^\d+$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
    throw new UsageError(
      `VIDEOGEN_PORT=${port} is not a port from 1 to 65535; set VIDEOGEN_URL to the server's address`,
    );
  }
  return `http://localhost:${Number(port)}`;
}

/** The current name's value, else the former name's, warning whenever the former name is set. */
function preferred(
  [name, value]: readonly [string, string | undefined],
  [formerName, formerValue]: readonly [string, string | undefined],
  warn: (message: string) => void,
): { source: string; value: string } | undefined {
  if (formerValue) {
    warn(value ? `${formerName} is ignored: ${name} is set` : `${formerName} is deprecated; use ${name}`);
  }
  if (value) return { source: name, value };
  return formerValue ? { source: formerName, value: formerValue } : undefined;
}

function checkedUrl(value: string, source: string): string {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new UsageError(`${source}: ${JSON.stringify(value)} is not a URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new UsageError(`${source}: ${JSON.stringify(value)} is not an http(s) URL`);
  }
  return value;
}

export function apiClientFrom(flags: ApiClientFlags, env: NodeJS.ProcessEnv = process.env): VideogenClient {
  const apiKey = flags['api-key'] || env.VIDEOGEN_API_KEY;
  if (!apiKey) throw new UsageError('no API key: set VIDEOGEN_API_KEY or pass --api-key');
  const baseUrl = serverUrlFrom(flags, env, (message) =>
    process.stderr.write(`videogen: warning: ${message}\n`),
  );
  return new VideogenClient({ baseUrl, apiKey });
}

/** An API error, worded for the terminal: `invalid_api_key: The API key is unknown or has been revoked.` */
export class ApiCommandError extends Error {
  constructor(error: VideogenError) {
    // One line, whatever the message holds (a proxy's error page is quoted in it).
    super(`${error.code}: ${error.message}`.replace(/\s+/g, ' ').trim(), { cause: error });
    this.name = 'ApiCommandError';
  }
}

/** Runs an API command, turning the SDK's errors into one-line messages (main prints them, exit status 1). */
export async function reportingApiErrors<T>(command: () => Promise<T>): Promise<T> {
  try {
    return await command();
  } catch (error) {
    if (error instanceof VideogenError) throw new ApiCommandError(error);
    throw error;
  }
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

function isoTime(unixSeconds: number): string {
  return new Date(unixSeconds * 1000).toISOString();
}

/** A task as `name: value` lines, for people. */
export function printTask(task: Task): void {
  const lines: [string, string | number][] = [
    ['id', task.id],
    ['model', task.model],
    ['status', task.status],
    ['progress', `${task.progress}%`],
    ['created', isoTime(task.created_at)],
    ['updated', isoTime(task.updated_at)],
    ['duration', `${task.duration} s`],
    ['quality', task.quality],
    ['aspect ratio', task.aspect_ratio],
    ['seed', task.seed],
  ];
  if (task.status === 'completed' || task.status === 'failed')
    lines.push(['ended', isoTime(task.completed_at)]);
  if (task.status === 'completed') lines.push(['video', task.results[0]]);
  if (task.status === 'failed') lines.push(['error', `${task.error.code}: ${task.error.message}`]);
  const width = Math.max(...lines.map(([name]) => name.length));
  for (const [name, value] of lines) process.stdout.write(`${`${name}:`.padEnd(width + 2)}${value}\n`);
}

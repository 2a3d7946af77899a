/**
 * What the API commands (`generate`, `tasks`) share: the `--base-url`, `--api-key` and `--json` flags, the
 * client they configure (flags first, then `VIDEOGEN_BASE_URL` and `VIDEOGEN_API_KEY`), and API errors as
 * one line with their code.
 */
import { DEFAULT_BASE_URL, type Task, VideogenClient, VideogenError } from '@videogen/client';
import { UsageError } from './usage-error.js';

export const API_CLIENT_OPTIONS = {
  'base-url': { type: 'string' },
  'api-key': { type: 'string' },
  json: { type: 'boolean', default: false },
} as const;

export interface ApiClientFlags {
  readonly 'base-url'?: string;
  readonly 'api-key'?: string;
}

export function apiClientFrom(flags: ApiClientFlags, env: NodeJS.ProcessEnv = process.env): VideogenClient {
  const apiKey = flags['api-key'] || env.VIDEOGEN_API_KEY;
  if (!apiKey) throw new UsageError('no API key: set VIDEOGEN_API_KEY or pass --api-key');
  const baseUrl = flags['base-url'] || env.VIDEOGEN_BASE_URL || DEFAULT_BASE_URL;
  let parsed: URL;
  try {
    parsed = new URL(baseUrl);
  } catch {
    throw new UsageError(`the base URL ${JSON.stringify(baseUrl)} is not a URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new UsageError(`the base URL ${JSON.stringify(baseUrl)} is not an http(s) URL`);
  }
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

/**
 * `videogen engines check` for a relay engine: the other server answers `GET /healthz`, and takes the key.
 * The key is tried on a task id that cannot exist: `404 task_not_found` means it was accepted, `401` that it
 * was refused. Nothing is created upstream.
 */
import type { Dispatcher } from 'undici';
import { checkRequest } from '../upstream-check.js';
import { bodyExcerpt } from '../upstream-request.js';

export const CHECK_TASK_ID = 'task-unified-check';

export interface RelayCheckTarget {
  readonly label: string;
  /** The base URL, without a trailing slash. */
  readonly base: string;
  readonly apiKey: string;
  readonly dispatcher?: Dispatcher;
}

/** Scheme, host and port: how messages name the server (never with credentials or a path). */
function origin(base: string): string {
  return new URL(base).origin;
}

function get(
  target: RelayCheckTarget,
  path: string,
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<Dispatcher.ResponseData> {
  return checkRequest(
    { label: target.label, what: `GET ${path}`, dispatcher: target.dispatcher, signal },
    { method: 'GET', url: `${target.base}${path}`, headers },
  );
}

function errorCodeOf(text: string): string | undefined {
  try {
    const code = (JSON.parse(text) as { error?: { code?: unknown } }).error?.code;
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}

export async function checkRelay(target: RelayCheckTarget, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted();
  const health = await get(target, '/healthz', {}, signal);
  if (health.statusCode < 200 || health.statusCode >= 300) {
    const excerpt = await bodyExcerpt(health.body);
    throw new Error(
      `${target.label}: GET /healthz at ${origin(target.base)} answered HTTP ${health.statusCode}${excerpt ? `: ${excerpt}` : ''}`,
    );
  }
  await health.body.dump();

  const path = `/v1/tasks/${CHECK_TASK_ID}`;
  const probe = await get(target, path, { authorization: `Bearer ${target.apiKey}` }, signal);
  const text = await probe.body.text().catch(() => '');
  const code = errorCodeOf(text);
  if (probe.statusCode === 401 || probe.statusCode === 403) {
    throw new Error(
      `${target.label}: the API key was refused by ${origin(target.base)} (HTTP ${probe.statusCode}${code ? ` ${code}` : ''}).`,
    );
  }
  if (probe.statusCode === 404 && code === 'task_not_found') return;
  throw new Error(
    `${target.label}: GET ${path} at ${origin(target.base)} answered HTTP ${probe.statusCode}${code ? ` ${code}` : ''} where a server of this API answers 404 task_not_found.`,
  );
}

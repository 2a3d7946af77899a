/**
 * `videogen engines check` for an ark engine: one authenticated call that creates nothing and costs nothing,
 * `GET /contents/generations/tasks?page_size=1` (list video tasks; the answer is `{"total", "items"}`). A
 * refused key is HTTP 401 `AuthenticationError`. Only the key is proven: whether the account has activated
 * the model shows on the first create (404 `ModelNotOpen`).
 */
import type { Dispatcher } from 'undici';
import { redactSecret } from '../redact-secret.js';
import { checkRequest } from '../upstream-check.js';
import { arkErrorOf, describeArkError } from './ark-job.js';

export interface ArkCheckTarget {
  readonly label: string;
  readonly url: URL;
  readonly apiKey: string;
  readonly dispatcher?: Dispatcher;
}

function errorIn(text: string): string {
  try {
    const error = arkErrorOf((JSON.parse(text) as { error?: unknown }).error);
    return error ? `: ${describeArkError(error)}` : '';
  } catch {
    return '';
  }
}

async function listOneTask(target: ArkCheckTarget, signal: AbortSignal): Promise<void> {
  const answer = await checkRequest(
    { label: target.label, what: target.url.origin, dispatcher: target.dispatcher, signal },
    {
      method: 'GET',
      url: target.url,
      headers: { authorization: `Bearer ${target.apiKey}`, accept: 'application/json' },
    },
  );
  const text = await answer.body.text().catch(() => '');
  const status = answer.statusCode;
  if (status === 401 || status === 403) {
    throw new Error(`${target.label}: Ark refused the API key (HTTP ${status}${errorIn(text)}).`);
  }
  if (status < 200 || status >= 300) {
    throw new Error(`${target.label}: GET ${target.url.pathname} answered HTTP ${status}${errorIn(text)}.`);
  }
  let list: { total?: unknown; items?: unknown } | undefined;
  try {
    list = JSON.parse(text) as { total?: unknown; items?: unknown };
  } catch {
    list = undefined;
  }
  if (typeof list?.total !== 'number' && !Array.isArray(list?.items)) {
    throw new Error(
      `${target.label}: GET ${target.url.pathname} answered without a task list; is ${target.url.origin} Ark's API (…/api/v3)?`,
    );
  }
}

export async function checkArk(target: ArkCheckTarget, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted();
  try {
    await listOneTask(target, signal);
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(redactSecret(message, target.apiKey));
  }
}

/**
 * One JSON call to the Gemini API, its error answers read as Google's envelope (google-error.ts):
 *
 * - 429 RESOURCE_EXHAUSTED is retried after `RetryInfo.retryDelay` (the API sends no `Retry-After`), or with
 *   exponential backoff when it gives none, within the task's time limit; a per-day quota or a quota of 0
 *   fails at once with `upstream_unavailable`, since no retry within a task's time limit would pass.
 * - 5xx, 408 and connection failures are retried by upstream-request.ts.
 * - A submit's 400 INVALID_ARGUMENT (other than a refused key) is Veo refusing the request's content or
 *   inputs: `upstream_refused` with Veo's message. Everything else is `upstream_error` (an `UpstreamRefusal`
 *   with the HTTP status), with a plain word for a refused key and for a model that is not available.
 *
 * The key travels only in the `x-goog-api-key` header, never in a URL, so messages (which name the path)
 * cannot carry it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { TaskFailure } from '../../domain/errors.js';
import {
  excerptOf,
  UpstreamAnswer,
  type UpstreamCall,
  type UpstreamOptions,
  UpstreamRefusal,
  upstreamRequest,
} from '../upstream-request.js';
import { describeGoogleError, type GoogleError, parseGoogleError } from './google-error.js';

/** What the call is, for what its refusals mean. */
export type GeminiCallKind = 'submit' | 'poll' | 'model';

export interface GeminiCallOptions extends UpstreamOptions {
  /** The configured model, for messages. */
  readonly model: string;
}

const BASE_DELAY_MS = 500;
const MAX_DELAY_MS = 30_000;

/** Error answers read here rather than by upstream-request.ts: 429 and the 4xx refusals. */
function readHere(status: number): boolean {
  return status === 429 || (status >= 400 && status < 500 && status !== 408);
}

function keyRefused(error: GoogleError): boolean {
  return (
    error.reason?.startsWith('API_KEY_') === true || error.httpStatus === 401 || error.httpStatus === 403
  );
}

function refusal(
  error: GoogleError,
  call: UpstreamCall,
  kind: GeminiCallKind,
  options: GeminiCallOptions,
): TaskFailure {
  const label = options.label;
  const said = describeGoogleError(error);
  if (keyRefused(error)) {
    return new UpstreamRefusal(error.httpStatus, `${label}: the Gemini API refused the API key (${said}).`);
  }
  if (kind === 'submit' && error.httpStatus === 400 && error.status === 'INVALID_ARGUMENT') {
    return new TaskFailure('upstream_refused', `${label}: Veo refused the request: ${error.message}`);
  }
  if (kind !== 'poll' && error.httpStatus === 404) {
    return new UpstreamRefusal(
      404,
      `${label}: the model "${options.model}" is not available on the Gemini API (retired, misspelt, or not open to this key): ${said}`,
    );
  }
  const path = new URL(call.url).pathname;
  return new UpstreamRefusal(error.httpStatus, `${label}: ${call.method} ${path} answered ${said}`);
}

/** Sends `call` and parses its 2xx answer as JSON; error answers become the failures described above. */
export async function geminiJson<T>(
  call: UpstreamCall,
  kind: GeminiCallKind,
  options: GeminiCallOptions,
): Promise<T> {
  const { label, signal } = options;
  for (let attempt = 1; ; attempt++) {
    let error: GoogleError;
    try {
      const response = await upstreamRequest(call, { ...options, finalAnswer: readHere });
      const body = await response.body.text();
      try {
        return JSON.parse(body) as T;
      } catch (cause) {
        const path = new URL(call.url).pathname;
        throw new TaskFailure(
          'upstream_error',
          `${label}: ${call.method} ${path} answered something that is not JSON: ${excerptOf(body)}`,
          { cause },
        );
      }
    } catch (caught) {
      if (!(caught instanceof UpstreamAnswer)) throw caught;
      error = parseGoogleError(caught.status, caught.body);
    }
    if (error.httpStatus !== 429) throw refusal(error, call, kind, options);
    const said = `${label}: the Gemini API's quota is exhausted (${describeGoogleError(error)})`;
    if (error.lastingQuota) throw new TaskFailure('upstream_unavailable', `${said}; not retried.`);
    const backoff = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** (attempt - 1)) * (0.5 + Math.random() / 2);
    const delay = error.retryDelayMs ?? backoff;
    const outOfAttempts = options.maxAttempts !== undefined && attempt >= options.maxAttempts;
    if (outOfAttempts || Date.now() + delay >= options.deadline) {
      throw new TaskFailure(
        'upstream_unavailable',
        `${said} (gave up after ${attempt} attempt${attempt === 1 ? '' : 's'}).`,
      );
    }
    await sleep(delay, undefined, { signal }).catch(() => {
      throw signal.reason;
    });
  }
}

/**
 * HTTP calls from an engine to the model server it hands work to. Transient failures (429, 5xx, a refused,
 * reset or timed-out connection) are retried with exponential backoff and jitter, honouring `Retry-After`,
 * for as long as the task's time limit allows; other 4xx answers fail at once with `upstream_error`, and
 * running out of time or retries with `upstream_unavailable`. Messages name the engine and the status, and
 * quote the start of the server's answer; they never carry request headers (keys stay out of task records).
 *
 * Model servers are the operator's own, usually on a private network, so these calls do not go through
 * the public-addresses-only dispatcher that guards user-supplied URLs.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { type Dispatcher, errors, FormData, Response, request } from 'undici';
import { TaskFailure } from '../domain/errors.js';
import { parseRetryAfter } from '../outbound/retry-after.js';

export type UpstreamBody = string | Buffer | Uint8Array | FormData;

export interface UpstreamCall {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly url: string | URL;
  readonly headers?: Readonly<Record<string, string>>;
  /** A body to send; JSON bodies are strings with a `content-type` header. undici's FormData is sent as multipart. */
  readonly body?: UpstreamBody;
}

export interface UpstreamOptions {
  /** Names the server in messages: `openai engine "sglang"`. */
  readonly label: string;
  readonly signal: AbortSignal;
  /** Epoch ms after which no attempt starts. */
  readonly deadline: number;
  readonly dispatcher?: Dispatcher;
  /** Per-attempt limit on waiting for the answer's headers and on silence in its body. */
  readonly attemptTimeoutMs?: number;
  /** First retry delay; doubles each time up to `maxDelayMs`. */
  readonly baseDelayMs?: number;
  readonly maxDelayMs?: number;
  /** Tries at most this many times in all (default: as many as the deadline allows). */
  readonly maxAttempts?: number;
  /** For tests: replaces `Math.random` in the jitter. */
  readonly random?: () => number;
  /**
   * Says whether an error answer is nonetheless the server's final word, to be read rather than retried or
   * refused (vLLM-Omni answers a failed video's `GET` with the failure's status and the video as the body).
   */
  readonly finalAnswer?: (status: number, body: string) => boolean;
}

const DEFAULT_ATTEMPT_TIMEOUT_MS = 60_000;
const DEFAULT_BASE_DELAY_MS = 500;
const DEFAULT_MAX_DELAY_MS = 30_000;
/** The most characters of an upstream answer that an error message quotes. */
const EXCERPT_CHARS = 300;

const TRANSIENT_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
]);

/** An answer of 4xx other than 408 and 429: the server refused the call, and asking again will not help. */
export class UpstreamRefusal extends TaskFailure {
  readonly status: number;

  constructor(status: number, message: string) {
    super('upstream_error', message);
    this.name = 'UpstreamRefusal';
    this.status = status;
  }
}

/** An error answer that `finalAnswer` kept: its status and body. */
export class UpstreamAnswer extends Error {
  readonly status: number;
  readonly body: string;

  constructor(status: number, body: string) {
    super(`HTTP ${status}`);
    this.name = 'UpstreamAnswer';
    this.status = status;
    this.body = body;
  }
}

export function isTransientStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = current.cause;
  }
  return undefined;
}

function isTransientError(error: unknown): boolean {
  const code = errorCode(error);
  return (code !== undefined && TRANSIENT_CODES.has(code)) || error instanceof errors.SocketError;
}

/**
 * The start of an answer, on one line, for an error message: its body as text, or what it parsed to (written
 * back as JSON).
 */
export function excerptOf(answer: unknown): string {
  const text = typeof answer === 'string' ? answer : (JSON.stringify(answer) ?? String(answer));
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > EXCERPT_CHARS ? `${line.slice(0, EXCERPT_CHARS)}…` : line;
}

export async function bodyExcerpt(body: Dispatcher.ResponseData['body']): Promise<string> {
  return excerptOf(await body.text().catch(() => ''));
}

function describeStatus(label: string, call: UpstreamCall, status: number, excerpt: string): string {
  const path = new URL(call.url).pathname;
  return `${label}: ${call.method} ${path} answered HTTP ${status}${excerpt ? `: ${excerpt}` : ''}`;
}

function describeError(label: string, call: UpstreamCall, error: unknown): string {
  const path = new URL(call.url).pathname;
  const code = errorCode(error);
  const reason = error instanceof Error ? error.message : String(error);
  return `${label}: ${call.method} ${path} failed: ${code && !reason.includes(code) ? `${code} ` : ''}${reason}`;
}

/**
 * `call`'s headers and body as sent: a FormData as the bytes of its multipart encoding, made by this package's
 * undici. Handed to `request` as it is, it would be encoded by the undici of the global dispatcher, which on
 * Node.js 24 is Node.js's own copy (reading node:http's `WebSocket`, as importing node:http from an ES module
 * does, installs it first), and that copy does not take this package's FormData for one: the request went out
 * without a body and waited until the server timed it out (nodejs/undici#5520).
 */
async function wireFormOf(call: UpstreamCall): Promise<Pick<UpstreamCall, 'headers' | 'body'>> {
  if (!(call.body instanceof FormData)) return { headers: call.headers, body: call.body };
  const encoded = new Response(call.body);
  const contentType = encoded.headers.get('content-type');
  return {
    headers: { ...call.headers, ...(contentType ? { 'content-type': contentType } : {}) },
    body: Buffer.from(await encoded.arrayBuffer()),
  };
}

/**
 * Sends `call`, retrying transient failures; resolves with the first 2xx answer. Redirects are not followed
 * (they would carry the key to wherever they point): a 3xx is refused like a 4xx. The caller reads
 * (or dumps) its body.
 */
export async function upstreamRequest(
  call: UpstreamCall,
  options: UpstreamOptions,
): Promise<Dispatcher.ResponseData> {
  const base = options.baseDelayMs ?? DEFAULT_BASE_DELAY_MS;
  const cap = options.maxDelayMs ?? DEFAULT_MAX_DELAY_MS;
  const random = options.random ?? Math.random;
  const attemptTimeout = options.attemptTimeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS;
  const { headers, body } = await wireFormOf(call);
  for (let attempt = 1; ; attempt++) {
    options.signal.throwIfAborted();
    let problem: string;
    let retryAfterMs: number | undefined;
    try {
      const response = await request(call.url, {
        method: call.method,
        headers,
        body,
        signal: options.signal,
        dispatcher: options.dispatcher,
        headersTimeout: attemptTimeout,
        bodyTimeout: attemptTimeout,
      });
      if (response.statusCode < 300) return response;
      const text = await response.body.text().catch(() => '');
      if (options.finalAnswer?.(response.statusCode, text))
        throw new UpstreamAnswer(response.statusCode, text);
      const excerpt = excerptOf(text);
      const location = response.headers.location;
      problem = describeStatus(
        options.label,
        call,
        response.statusCode,
        typeof location === 'string' ? `a redirect to ${location}, not followed` : excerpt,
      );
      if (!isTransientStatus(response.statusCode)) throw new UpstreamRefusal(response.statusCode, problem);
      const header = response.headers['retry-after'];
      retryAfterMs = parseRetryAfter(Array.isArray(header) ? header[0] : header, Date.now());
    } catch (error) {
      if (options.signal.aborted) throw options.signal.reason;
      if (error instanceof TaskFailure || error instanceof UpstreamAnswer) throw error;
      if (!isTransientError(error)) {
        throw new TaskFailure('upstream_error', describeError(options.label, call, error), { cause: error });
      }
      problem = describeError(options.label, call, error);
    }
    const backoff = Math.min(cap, base * 2 ** (attempt - 1)) * (0.5 + random() / 2);
    const delay = Math.max(backoff, retryAfterMs ?? 0);
    const outOfAttempts = options.maxAttempts !== undefined && attempt >= options.maxAttempts;
    if (outOfAttempts || Date.now() + delay >= options.deadline) {
      throw new TaskFailure(
        'upstream_unavailable',
        `${problem} (gave up after ${attempt} attempt${attempt === 1 ? '' : 's'})`,
      );
    }
    await sleep(delay, undefined, { signal: options.signal }).catch(() => {
      throw options.signal.reason;
    });
  }
}

/**
 * `upstreamRequest`, then the answer's body parsed as JSON (an error answer's too, when `finalAnswer` keeps
 * it); a body that is not JSON is `upstream_error`.
 */
export async function upstreamJson<T>(call: UpstreamCall, options: UpstreamOptions): Promise<T> {
  let text: string;
  try {
    const response = await upstreamRequest(call, options);
    text = await response.body.text();
  } catch (error) {
    if (!(error instanceof UpstreamAnswer)) throw error;
    text = error.body;
  }
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    throw new TaskFailure(
      'upstream_error',
      `${options.label}: ${call.method} ${new URL(call.url).pathname} answered something that is not JSON: ${excerptOf(text)}`,
      { cause: error },
    );
  }
}

/**
 * One API call over fetch: the key and JSON headers, a per-attempt timeout, the caller's abort signal, typed
 * errors for non-2xx answers, and retries with backoff (honouring `Retry-After`) for what is safe to retry.
 */
import { ConnectionError, errorFromResponse, RequestTimeoutError, VideogenError } from './errors.js';
import { type BackoffOptions, DEFAULT_BACKOFF, isRetryable, retryDelayMs, sleep } from './retry.js';

/**
 * A server that asks for more than a minute (a quota reset, an outage) is better answered at once: the error
 * carries `retryAfter`, and the caller decides, rather than a call hanging for as long as the server says.
 */
export const DEFAULT_MAX_RETRY_WAIT_MS = 60_000;

export type FetchFunction = (input: string, init: RequestInit) => Promise<Response>;

export interface TransportOptions {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly fetch: FetchFunction;
  readonly maxRetries: number;
  /** Per attempt, in ms, until the whole answer has arrived (for streams: until its headers have). */
  readonly timeout: number;
  readonly backoff?: BackoffOptions;
  /** The longest wait before a retry; an error that asks for longer is thrown instead of waited out. */
  readonly maxRetryWait?: number;
}

export type QueryValue = string | number | boolean | undefined;

export interface ApiRequest {
  readonly method: 'GET' | 'POST' | 'DELETE';
  /** From the base URL, e.g. `/v1/tasks`. */
  readonly path: string;
  readonly query?: Readonly<Record<string, QueryValue>>;
  /** Sent as JSON. */
  readonly json?: unknown;
  /** Sent as multipart/form-data. */
  readonly form?: FormData;
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Whether the request may be repeated after a broken connection without doing its work twice. GET and
   * DELETE are; a POST is when it carries an `Idempotency-Key`.
   */
  readonly idempotent?: boolean;
  readonly signal?: AbortSignal | undefined;
  readonly timeout?: number | undefined;
  readonly maxRetries?: number | undefined;
}

interface SentRequest extends ApiRequest {
  /** Answer as soon as the headers arrive and hand back the body unread (an event stream). */
  readonly stream: boolean;
}

/** Per-call overrides every method accepts. */
export interface RequestOptions {
  /** Aborts the call, including its retries and waits; the call then rejects with the signal's reason. */
  readonly signal?: AbortSignal;
  /** Overrides the client's per-attempt timeout, in ms. */
  readonly timeout?: number;
  /** Overrides the client's `maxRetries`. */
  readonly maxRetries?: number;
}

interface Answer {
  readonly response: Response;
  /** The whole body; undefined for a stream, whose body is left to the caller. */
  readonly text: string | undefined;
}

export class Transport {
  private readonly options: TransportOptions;

  constructor(options: TransportOptions) {
    this.options = options;
  }

  get baseUrl(): string {
    return this.options.baseUrl;
  }

  /** Sends the request and parses the 2xx answer's JSON body. */
  async json<T>(request: ApiRequest): Promise<T> {
    const { response, text } = await this.send({ ...request, stream: false });
    try {
      return JSON.parse(text ?? '') as T;
    } catch {
      throw new ConnectionError(
        'unexpected_response',
        `${request.method} ${request.path}: the answer is not JSON`,
        {
          status: response.status,
          requestId: response.headers.get('x-request-id') ?? undefined,
          headers: response.headers,
        },
      );
    }
  }

  /** Sends the request and answers the 2xx response as soon as its headers arrive, its body unread. */
  async stream(request: ApiRequest): Promise<Response> {
    return (await this.send({ ...request, stream: true })).response;
  }

  /** Sends the request, retrying what is safe to retry, and answers the first 2xx answer. */
  private async send(request: SentRequest): Promise<Answer> {
    const maxRetries = request.maxRetries ?? this.options.maxRetries;
    const idempotent = request.idempotent ?? (request.method === 'GET' || request.method === 'DELETE');
    for (let retry = 0; ; retry++) {
      try {
        return await this.attempt(request);
      } catch (error) {
        if (request.signal?.aborted) throw request.signal.reason;
        if (retry >= maxRetries || !isRetryable(error, idempotent)) throw error;
        const delay = retryDelayMs(
          retry,
          error instanceof VideogenError ? error : undefined,
          this.options.backoff ?? DEFAULT_BACKOFF,
        );
        if (delay > (this.options.maxRetryWait ?? DEFAULT_MAX_RETRY_WAIT_MS)) throw error;
        await sleep(delay, request.signal);
      }
    }
  }

  private url(request: SentRequest): string {
    const url = new URL(this.options.baseUrl.replace(/\/+$/, '') + request.path);
    for (const [name, value] of Object.entries(request.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    return url.href;
  }

  private headers(request: SentRequest): Record<string, string> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.options.apiKey}`,
      accept: request.stream ? 'text/event-stream' : 'application/json',
      ...request.headers,
    };
    if (request.json !== undefined) headers['content-type'] = 'application/json';
    return headers;
  }

  private async attempt(request: SentRequest): Promise<Answer> {
    const timeoutMs = request.timeout ?? this.options.timeout;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const unlink = linkAbort(request.signal, controller);
    let handedOver = false;
    try {
      let response: Response;
      try {
        response = await this.options.fetch(this.url(request), {
          method: request.method,
          headers: this.headers(request),
          body: request.json !== undefined ? JSON.stringify(request.json) : request.form,
          signal: controller.signal,
        });
      } catch (error) {
        throw this.failure(error, request, timedOut, timeoutMs);
      }
      if (response.ok && request.stream) {
        // The stream outlives this attempt: the caller's signal must still reach it, the timeout must not.
        clearTimeout(timer);
        handedOver = true;
        return { response, text: undefined };
      }
      let text: string;
      try {
        text = await response.text();
      } catch (error) {
        throw this.failure(error, request, timedOut, timeoutMs);
      }
      if (!response.ok) throw errorFromResponse(response.status, response.headers, text);
      return { response, text };
    } finally {
      clearTimeout(timer);
      if (!handedOver) unlink();
    }
  }

  private failure(error: unknown, request: SentRequest, timedOut: boolean, timeoutMs: number): unknown {
    if (request.signal?.aborted) return request.signal.reason;
    if (timedOut) {
      return new RequestTimeoutError(
        'request_timeout',
        `${request.method} ${request.path}: no answer within ${timeoutMs} ms`,
        { cause: error },
      );
    }
    // fetch's own message is vague ("fetch failed"); its cause says what happened (ECONNREFUSED …).
    const cause = error instanceof Error ? describeCause(error.cause) : undefined;
    const reason = error instanceof Error ? `${error.message}${cause ? `: ${cause}` : ''}` : String(error);
    return new ConnectionError('connection_error', `${request.method} ${request.path}: ${reason}`, {
      cause: error,
    });
  }
}

/**
 * What a fetch failure's cause says. Node's connection errors may be an `AggregateError` with an empty
 * message (every address of `localhost`, IPv6 and IPv4, refused): then its code or its first error's message.
 */
function describeCause(cause: unknown): string | undefined {
  if (!(cause instanceof Error)) return undefined;
  if (cause.message) return cause.message;
  const inner = cause instanceof AggregateError ? describeCause(cause.errors[0]) : undefined;
  const code = (cause as { code?: unknown }).code;
  return inner ?? (typeof code === 'string' ? code : undefined);
}

/** Aborts `controller` when `signal` aborts; answers a function that undoes the link. */
export function linkAbort(signal: AbortSignal | undefined, controller: AbortController): () => void {
  if (!signal) return () => undefined;
  if (signal.aborted) {
    controller.abort(signal.reason);
    return () => undefined;
  }
  const onAbort = () => controller.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  return () => signal.removeEventListener('abort', onAbort);
}

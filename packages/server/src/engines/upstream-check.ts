/**
 * The calls an engine's `check()` makes for `videogen engines check`: one attempt each, within 10 s. When the
 * caller's signal aborts, its reason is rethrown as it is; when the 10 s run out, the message says which call
 * did not answer; any other failure is an Error whose message never carries the API key.
 */
import { type Dispatcher, request } from 'undici';
import { redactSecret } from './redact-secret.js';
import {
  type UpstreamCall,
  type UpstreamOptions,
  UpstreamRefusal,
  upstreamRequest,
} from './upstream-request.js';

const CHECK_TIMEOUT_MS = 10_000;

/** Who makes a check's call, and how its message names the call. */
export interface CheckCaller {
  /** Names the engine in messages: `replicate engine "wan"`. */
  readonly label: string;
  /** Names the call when it does not answer in time: `GET /v1/account`. */
  readonly what: string;
  readonly dispatcher?: Dispatcher;
  /** The caller's: when it aborts, its reason is rethrown. */
  readonly signal: AbortSignal;
}

export interface CheckLimit extends CheckCaller {
  /** Taken out of every message. */
  readonly apiKey?: string;
  /** The check's time limit, for a check of several calls that share it (checkTimeLimit()); by default the call's own. */
  readonly timeLimit?: AbortSignal;
}

export interface UpstreamCheck<T> extends CheckLimit {
  readonly call: UpstreamCall;
  /** What a refusal (4xx) means: a value passes the check with it; by default it fails the check. */
  readonly onRefusal?: (refusal: UpstreamRefusal) => T;
  /** Reads a 2xx answer; what it throws fails the check. By default the answer is passed unread. */
  readonly read?: (response: Dispatcher.ResponseData) => Promise<T>;
}

/** A 10 s limit for the calls of one check to share. */
export function checkTimeLimit(): AbortSignal {
  return AbortSignal.timeout(CHECK_TIMEOUT_MS);
}

async function withinLimit<T>(
  caller: CheckCaller,
  timeLimit: AbortSignal | undefined,
  run: (signal: AbortSignal) => Promise<T>,
  failure: (error: unknown) => Error,
): Promise<T> {
  // Held here and read below: AbortSignal.any() keeps its sources only weakly.
  const timeout = timeLimit ?? checkTimeLimit();
  try {
    return await run(AbortSignal.any([caller.signal, timeout]));
  } catch (error) {
    if (caller.signal.aborted) throw caller.signal.reason;
    if (timeout.aborted) {
      throw new Error(`${caller.label}: ${caller.what} did not answer within ${CHECK_TIMEOUT_MS / 1000} s.`);
    }
    throw failure(error);
  }
}

/** Runs `send`, the check's own way of making its call, with the upstream options of one attempt in time. */
export function withinCheckLimit<T>(
  limit: CheckLimit,
  send: (options: UpstreamOptions) => Promise<T>,
): Promise<T> {
  return withinLimit(
    limit,
    limit.timeLimit,
    (signal) =>
      send({
        label: limit.label,
        signal,
        deadline: Date.now() + CHECK_TIMEOUT_MS,
        dispatcher: limit.dispatcher,
        attemptTimeoutMs: CHECK_TIMEOUT_MS,
        maxAttempts: 1,
      }),
    (error) => {
      const message = error instanceof Error ? error.message : String(error);
      return new Error(redactSecret(message, limit.apiKey));
    },
  );
}

/** Sends the check's call (upstream-request.ts); passes on a 2xx, unless `read` or `onRefusal` say otherwise. */
export function upstreamCheck(check: UpstreamCheck<void>): Promise<void>;
export function upstreamCheck<T>(
  check: UpstreamCheck<T> & Required<Pick<UpstreamCheck<T>, 'read'>>,
): Promise<T>;
export function upstreamCheck<T>(check: UpstreamCheck<T | undefined>): Promise<T | undefined> {
  return withinCheckLimit(check, async (options) => {
    let response: Dispatcher.ResponseData;
    try {
      response = await upstreamRequest(check.call, options);
    } catch (error) {
      if (error instanceof UpstreamRefusal && check.onRefusal) return check.onRefusal(error);
      throw error;
    }
    if (check.read) return check.read(response);
    await response.body.dump();
    return undefined;
  });
}

/**
 * Sends a check's call as it is, for a check that reads every answer itself, whatever its status. A failure
 * to connect says the server could not be reached; the caller keeps the key out of what it throws.
 */
export function checkRequest(caller: CheckCaller, call: UpstreamCall): Promise<Dispatcher.ResponseData> {
  return withinLimit(
    caller,
    undefined,
    (signal) =>
      request(call.url, {
        method: call.method,
        headers: call.headers,
        body: call.body,
        signal,
        dispatcher: caller.dispatcher,
        headersTimeout: CHECK_TIMEOUT_MS,
        bodyTimeout: CHECK_TIMEOUT_MS,
      }),
    (error) => {
      const code = (error as { code?: unknown }).code;
      const reason = error instanceof Error ? error.message : String(error);
      return new Error(
        `${caller.label}: ${new URL(call.url).origin} could not be reached: ${typeof code === 'string' && !reason.includes(code) ? `${code} ` : ''}${reason}`,
        { cause: error },
      );
    },
  );
}

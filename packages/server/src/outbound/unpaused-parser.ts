/**
 * An undici interceptor that never lets a reader's backpressure pause undici's HTTP/1 parser: what the reader
 * is not ready for waits here, in a queue bounded per response, and is handed on when it resumes.
 *
 * undici 7 asserts that its parser is not paused when the server ends the connection of an answer that is not
 * kept alive (HTTP/1.0, `Connection: close`): when a reader paused the body just before the end, that assertion
 * throws from the socket's `end` handler, where nothing can catch it, and the process exits
 * (nodejs/undici#5360, fixed only in undici 8, which needs Node.js 22). Why this rather than undici 8:
 * docs/decisions.md#outbound-http-on-undici-7.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Dispatcher } from 'undici';

/** Bytes of one answer that may wait for its reader before the call is aborted. */
export const DEFAULT_MAX_WAITING_BYTES = 64 * 1024 * 1024;

/** The call's answer came faster than its reader took it, by more than the limit. */
export class ReaderTooSlowError extends Error {
  constructor(maxWaitingBytes: number) {
    super(
      `the answer came faster than it could be taken: more than ${Math.round(maxWaitingBytes / 1024 / 1024)} MB waiting`,
    );
    this.name = 'ReaderTooSlowError';
  }
}

type Step = { readonly chunk: Buffer } | { readonly trailers: IncomingHttpHeaders };

/**
 * Stands between undici's controller and the reader's handler: the reader's `pause` holds the answer here
 * instead of in the parser; `abort` and everything read through it reach the real controller.
 */
class HeldResponse implements Dispatcher.DispatchHandler, Dispatcher.DispatchController {
  #upstream: Dispatcher.DispatchController | undefined;
  #paused = false;
  #flushing = false;
  #waiting: Step[] = [];
  #waitingBytes = 0;

  constructor(
    private readonly reader: Dispatcher.DispatchHandler,
    private readonly maxWaitingBytes: number,
  ) {}

  // The controller the reader sees.

  get aborted(): boolean {
    return this.#upstream?.aborted ?? false;
  }

  get paused(): boolean {
    return this.#paused;
  }

  get reason(): Error | null {
    return this.#upstream?.reason ?? null;
  }

  get rawHeaders() {
    return this.#upstream?.rawHeaders;
  }

  get rawTrailers() {
    return this.#upstream?.rawTrailers;
  }

  abort(reason: Error): void {
    this.#upstream?.abort(reason);
  }

  pause(): void {
    this.#paused = true;
  }

  resume(): void {
    if (!this.#paused) return;
    this.#paused = false;
    this.#flush();
  }

  // The handler undici sees.

  onRequestStart(controller: Dispatcher.DispatchController, context: unknown): void {
    this.#upstream = controller;
    this.#paused = false;
    this.#waiting = [];
    this.#waitingBytes = 0;
    this.reader.onRequestStart?.(this, context);
  }

  onRequestUpgrade(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
    socket: Duplex,
  ): void {
    this.reader.onRequestUpgrade?.(this, statusCode, headers, socket);
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
    statusMessage?: string,
  ): void {
    this.reader.onResponseStart?.(this, statusCode, headers, statusMessage);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (!this.#paused && this.#waiting.length === 0) {
      this.reader.onResponseData?.(this, chunk);
      return;
    }
    this.#waitingBytes += chunk.length;
    if (this.#waitingBytes > this.maxWaitingBytes) {
      this.#waiting = [];
      controller.abort(new ReaderTooSlowError(this.maxWaitingBytes));
      return;
    }
    this.#waiting.push({ chunk });
  }

  onResponseEnd(_controller: Dispatcher.DispatchController, trailers: IncomingHttpHeaders): void {
    if (!this.#paused && this.#waiting.length === 0) this.reader.onResponseEnd?.(this, trailers);
    else this.#waiting.push({ trailers });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.#waiting = [];
    this.reader.onResponseError?.(this, error);
  }

  /** Hands on what waited, until the reader pauses again; a resume from inside the reader does not re-enter. */
  #flush(): void {
    if (this.#flushing) return;
    this.#flushing = true;
    try {
      while (!this.#paused) {
        const step = this.#waiting.shift();
        if (!step) break;
        if ('chunk' in step) {
          this.#waitingBytes -= step.chunk.length;
          this.reader.onResponseData?.(this, step.chunk);
        } else {
          this.reader.onResponseEnd?.(this, step.trailers);
        }
      }
    } finally {
      this.#flushing = false;
    }
  }
}

/** The interceptor: `new Agent(…).compose(unpausedParser())`. */
export function unpausedParser(
  maxWaitingBytes = DEFAULT_MAX_WAITING_BYTES,
): Dispatcher.DispatcherComposeInterceptor {
  return (dispatch) => (options, handler) => dispatch(options, new HeldResponse(handler, maxWaitingBytes));
}

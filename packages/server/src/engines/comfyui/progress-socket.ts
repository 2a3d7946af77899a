/**
 * ComfyUI's websocket (`/ws?clientId=…`): step progress of a prompt and the news that it finished or failed.
 * It is opened before the prompt is queued, so messages that arrive before the prompt ID is known are kept
 * and read once it is. A socket that closes early rejects with `SocketLost`; the engine then polls history.
 */
import { type Dispatcher, type MessageEvent, WebSocket } from 'undici';
import { executionFailure } from './comfyui-job.js';

/** The socket closed or failed before the prompt finished. */
export class SocketLost extends Error {
  constructor(message = 'The ComfyUI websocket closed.') {
    super(message);
    this.name = 'SocketLost';
  }
}

interface SocketMessage {
  readonly type: string;
  readonly data: Readonly<Record<string, unknown>>;
}

export interface SocketOptions {
  readonly headers: Readonly<Record<string, string>>;
  readonly dispatcher?: Dispatcher;
  readonly signal: AbortSignal;
  readonly timeoutMs: number;
  /** Names the engine in failures: `comfyui engine "ltx"`. */
  readonly label: string;
}

type ProgressListener = (node: string | undefined, value: number, max: number) => void;

interface Watch {
  readonly promptId: string;
  readonly onProgress: ProgressListener;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

function parse(data: unknown): SocketMessage | undefined {
  // Binary frames are preview images.
  if (typeof data !== 'string') return undefined;
  try {
    const message = JSON.parse(data) as { type?: unknown; data?: unknown };
    if (typeof message.type !== 'string') return undefined;
    const body = message.data !== null && typeof message.data === 'object' ? message.data : {};
    return { type: message.type, data: body as Record<string, unknown> };
  } catch {
    return undefined;
  }
}

export class ProgressSocket {
  readonly #socket: WebSocket;
  readonly #label: string;
  /** Messages not yet read: all of them until `watch` is called. */
  readonly #pending: SocketMessage[] = [];
  #watch: Watch | undefined;
  #lost: SocketLost | undefined;

  private constructor(socket: WebSocket, label: string) {
    this.#socket = socket;
    this.#label = label;
    socket.addEventListener('message', (event: MessageEvent) => {
      const message = parse(event.data);
      if (!message) return;
      this.#pending.push(message);
      this.#drain();
    });
    const lose = (): void => {
      this.#lost ??= new SocketLost();
      this.#watch?.reject(this.#lost);
      this.#watch = undefined;
    };
    socket.addEventListener('close', lose);
    socket.addEventListener('error', lose);
  }

  /** Connects; rejects when the server refuses, does not answer within `timeoutMs`, or `signal` aborts. */
  static open(url: URL, options: SocketOptions): Promise<ProgressSocket> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url, { headers: { ...options.headers }, dispatcher: options.dispatcher });
      socket.binaryType = 'arraybuffer';
      const done = (error?: unknown): void => {
        clearTimeout(timer);
        options.signal.removeEventListener('abort', onAbort);
        socket.removeEventListener('open', onOpen);
        socket.removeEventListener('error', onFail);
        socket.removeEventListener('close', onFail);
        if (error === undefined) {
          resolve(new ProgressSocket(socket, options.label));
        } else {
          socket.close();
          reject(error);
        }
      };
      const onOpen = (): void => done();
      const onFail = (): void => done(new SocketLost('The ComfyUI websocket could not be opened.'));
      const onAbort = (): void => done(options.signal.reason);
      const timer = setTimeout(
        () => done(new SocketLost('The ComfyUI websocket did not open in time.')),
        options.timeoutMs,
      );
      socket.addEventListener('open', onOpen);
      socket.addEventListener('error', onFail);
      socket.addEventListener('close', onFail);
      if (options.signal.aborted) onAbort();
      else options.signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Resolves when the prompt has finished running (ComfyUI's `executing` with no node); rejects with a
   * `TaskFailure` when it failed or was interrupted, `SocketLost` when the socket closes first, or the
   * signal's reason on abort. Reports each step of a node to `onProgress`.
   */
  finished(promptId: string, onProgress: ProgressListener, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => settle(() => reject(signal.reason));
      const settle = (action: () => void): void => {
        signal.removeEventListener('abort', onAbort);
        this.#watch = undefined;
        action();
      };
      if (signal.aborted) return reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      this.#watch = {
        promptId,
        onProgress,
        resolve: () => settle(resolve),
        reject: (error) => settle(() => reject(error)),
      };
      this.#drain();
      if (this.#watch && this.#lost) this.#watch.reject(this.#lost);
    });
  }

  #drain(): void {
    while (this.#watch && this.#pending.length > 0) {
      const message = this.#pending.shift() as SocketMessage;
      this.#read(message, this.#watch);
    }
  }

  #read({ type, data }: SocketMessage, watch: Watch): void {
    // Every message for this client ID is about its prompts; the ID filters out an earlier prompt's stragglers.
    if (typeof data.prompt_id === 'string' && data.prompt_id !== watch.promptId) return;
    switch (type) {
      case 'progress': {
        const node = typeof data.node === 'string' ? data.node : undefined;
        if (typeof data.value === 'number' && typeof data.max === 'number')
          watch.onProgress(node, data.value, data.max);
        return;
      }
      case 'executing':
        if (data.node === null) watch.resolve();
        return;
      case 'execution_error':
      case 'execution_interrupted':
        watch.reject(executionFailure(this.#label, type, data));
        return;
    }
  }

  close(): void {
    this.#lost ??= new SocketLost();
    try {
      this.#socket.close();
    } catch {
      // Closing a socket that is already closing throws nothing useful to act on.
    }
  }
}

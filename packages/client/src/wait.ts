/**
 * Waiting for a task to end: its Server-Sent Events when the server has them (one request, every change as
 * it happens), else polling with a growing interval. A stream that breaks or ends early is opened again; a
 * server without the events route (the bare interface has none) is polled instead.
 */
import { ConnectionError, NotFoundError, VideogenError } from './errors.js';
import { parseEventStream } from './event-stream.js';
import { backoffDelayMs, sleep } from './retry.js';
import { linkAbort, type RequestOptions, type Transport } from './transport.js';
import { type FinalTask, isFinal, type Task } from './types.js';

export interface WaitOptions extends RequestOptions {
  /**
   * `events`: the task's event stream; `poll`: `GET /v1/tasks/{id}` at intervals; `auto` (the default): the
   * stream, or polling where the server has no stream.
   */
  readonly method?: 'auto' | 'events' | 'poll';
  /** Called with the task whenever its status or progress changes (and once at the start). */
  readonly onProgress?: (task: Task) => void;
  /** Polling: the first interval, in ms (1000 by default, at least 100); it grows by half each time. */
  readonly pollInterval?: number;
  /** Polling: the longest interval, in ms (5000 by default). */
  readonly maxPollInterval?: number;
}

const MIN_POLL_INTERVAL_MS = 100;

/** A quiet stream still carries a keep-alive comment every 15 s; this long without a byte means it is dead. */
const STREAM_IDLE_LIMIT_MS = 45_000;

/** Opening the stream failed in a way that says the server has no event stream for tasks. */
function isStreamUnsupported(error: unknown): boolean {
  if (!(error instanceof VideogenError)) return false;
  if (error instanceof NotFoundError) return error.code !== 'task_not_found';
  return error.status === 405 || error.status === 406 || error.status === 501;
}

/** What the caller's `onProgress` threw: handed back as it is, never taken for a broken stream. */
class ProgressCallbackFailure extends Error {
  constructor(readonly error: unknown) {
    super('onProgress threw', { cause: error });
  }
}

class ProgressReporter {
  private last: Task | undefined;

  constructor(private readonly onProgress: ((task: Task) => void) | undefined) {}

  report(task: Task): void {
    if (this.last?.status === task.status && this.last.progress === task.progress) return;
    this.last = task;
    try {
      this.onProgress?.(task);
    } catch (error) {
      throw new ProgressCallbackFailure(error);
    }
  }
}

export interface TaskSource {
  readonly transport: Transport;
  readonly getTask: (taskId: string, options: RequestOptions) => Promise<Task>;
  /** How many times in a row a stream may break before polling takes over. */
  readonly maxRetries: number;
}

export async function waitForTask(
  source: TaskSource,
  taskId: string,
  options: WaitOptions = {},
): Promise<FinalTask> {
  const method = options.method ?? 'auto';
  const reporter = new ProgressReporter(options.onProgress);
  const { transport, getTask } = source;
  const maxRetries = options.maxRetries ?? source.maxRetries;
  try {
    if (method !== 'poll') {
      const streamed = await followEvents(
        transport,
        taskId,
        options,
        reporter,
        method === 'auto',
        maxRetries,
      );
      if (streamed) return streamed;
    }
    return await poll(getTask, taskId, options, reporter);
  } catch (error) {
    throw error instanceof ProgressCallbackFailure ? error.error : error;
  }
}

/** The task's final state from its event stream, or undefined when `fallBack` is allowed and polling is needed. */
async function followEvents(
  transport: Transport,
  taskId: string,
  options: WaitOptions,
  reporter: ProgressReporter,
  fallBack: boolean,
  maxRetries: number,
): Promise<FinalTask | undefined> {
  let failuresInARow = 0;
  for (;;) {
    const stream = new AbortController();
    const unlink = linkAbort(options.signal, stream);
    let idleTimer: ReturnType<typeof setTimeout> | undefined;
    const resetIdleTimer = () => {
      clearTimeout(idleTimer);
      idleTimer = setTimeout(
        () => stream.abort(new Error('the event stream went quiet')),
        STREAM_IDLE_LIMIT_MS,
      );
    };
    try {
      let response: Response;
      try {
        response = await transport.stream({
          method: 'GET',
          path: `/v1/tasks/${encodeURIComponent(taskId)}/events`,
          signal: stream.signal,
          timeout: options.timeout,
          maxRetries: options.maxRetries,
        });
      } catch (error) {
        if (fallBack && isStreamUnsupported(error)) return undefined;
        throw error;
      }
      if (!response.body || !response.headers.get('content-type')?.includes('text/event-stream')) {
        await response.body?.cancel();
        if (fallBack) return undefined;
        throw new ConnectionError(
          'unexpected_response',
          `GET /v1/tasks/${taskId}/events is not an event stream`,
          {
            status: response.status,
            headers: response.headers,
          },
        );
      }
      resetIdleTimer();
      const watched = response.body.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, controller) {
            resetIdleTimer();
            controller.enqueue(chunk);
          },
        }),
      );
      for await (const event of parseEventStream(watched)) {
        if (event.event !== 'task') continue;
        const task = JSON.parse(event.data) as Task;
        failuresInARow = 0;
        reporter.report(task);
        if (isFinal(task)) return task;
      }
      // The stream ended on a state that is not final (the server restarting): open another.
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      if (error instanceof ProgressCallbackFailure) throw error;
      if (error instanceof VideogenError && !(error instanceof ConnectionError)) throw error;
      // A broken connection or a quiet stream: open another, unless it keeps failing.
    } finally {
      clearTimeout(idleTimer);
      unlink();
    }
    failuresInARow++;
    if (failuresInARow > maxRetries) {
      if (fallBack) return undefined;
      throw new ConnectionError('connection_error', `the event stream of ${taskId} kept breaking`);
    }
    await sleep(backoffDelayMs(failuresInARow - 1), options.signal);
  }
}

async function poll(
  getTask: (taskId: string, options: RequestOptions) => Promise<Task>,
  taskId: string,
  options: WaitOptions,
  reporter: ProgressReporter,
): Promise<FinalTask> {
  // A floor, so that an interval of 0 (or a negative one) cannot turn the wait into a busy loop of requests.
  const maxInterval = Math.max(MIN_POLL_INTERVAL_MS, options.maxPollInterval ?? 5_000);
  let interval = Math.min(Math.max(MIN_POLL_INTERVAL_MS, options.pollInterval ?? 1_000), maxInterval);
  for (;;) {
    const task = await getTask(taskId, options);
    reporter.report(task);
    if (isFinal(task)) return task;
    await sleep(interval, options.signal);
    interval = Math.min(maxInterval, interval * 1.5);
  }
}

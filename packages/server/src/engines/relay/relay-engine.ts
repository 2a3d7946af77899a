/**
 * The `relay` engine: hands a task to another server of this same API (another videogen, or a provider's;
 * relay-request.ts), polls its task (relay-job.ts), downloads the video from the signed result link and conforms
 * it (hosted/remote-job-engine.ts).
 * A render that is stopped here asks the other server to cancel its task.
 */
import { randomBytes } from 'node:crypto';
import type { UpstreamHandle } from '../../domain/upstream-job.js';
import type { RenderJob } from '../../ports/engine.js';
import type { EngineContext } from '../engine-context.js';
import { CANCEL_TIMEOUT_MS } from '../hosted/hosted-task.js';
import { RemoteJobEngine, type RemoteJobSteps, type UpstreamCalls } from '../hosted/remote-job-engine.js';
import { fetchUpstreamFile } from '../upstream-file.js';
import { type UpstreamOptions, upstreamJson, upstreamRequest } from '../upstream-request.js';
import { checkRelay } from './relay-check.js';
import { type RelayTask, readRelayTask, relayStatus } from './relay-job.js';
import type { RelayOptions } from './relay-options.js';
import { type RelayCreateBody, relayCreateBody } from './relay-request.js';

const DEFAULT_POLL_INTERVAL_MS = 2000;

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The render was aborted.', 'AbortError');
}

export class RelayEngine extends RemoteJobEngine<string> {
  readonly #options: RelayOptions;
  readonly #base: string;

  constructor(name: string, options: RelayOptions, context: EngineContext) {
    super('relay', name, context);
    this.#options = options;
    this.#base = options.base_url.replace(/\/+$/, '');
  }

  protected get secret(): string {
    return this.#options.api_key;
  }

  protected override get modelSound(): boolean {
    return true;
  }

  protected get pollIntervalMs(): number {
    return this.#options.poll_interval_ms ?? DEFAULT_POLL_INTERVAL_MS;
  }

  protected cancelUpstream(job: UpstreamHandle): Promise<void> {
    return this.#cancel(job.id);
  }

  protected checkUpstream(signal: AbortSignal): Promise<void> {
    const target = {
      label: this.label,
      base: this.#base,
      apiKey: this.#options.api_key,
      dispatcher: this.context.dispatcher,
    };
    return checkRelay(target, signal);
  }

  /** The result is the task's first result link, signed, which may be on another host (a storage bucket). */
  protected steps(job: RenderJob, calls: UpstreamCalls): RemoteJobSteps<string> {
    const upstream = this.upstream(calls);
    return {
      submit: async () => ({
        id: (await this.#create(job, await relayCreateBody(job, this.#options.model), upstream)).id,
      }),
      poll: async ({ id }) => relayStatus(await this.#read(id, calls), this.label),
      // Signed: the key is not sent with it.
      download: (link, path) =>
        fetchUpstreamFile({ method: 'GET', url: new URL(link, `${this.#base}/`) }, path, upstream),
    };
  }

  /**
   * Creates the other server's task. A stop while the request is in flight rejects at once, but the request
   * is given a moment to finish, so that a task the other server did make is cancelled rather than rendered
   * for nobody.
   */
  async #create(job: RenderJob, body: RelayCreateBody, upstream: UpstreamOptions): Promise<RelayTask> {
    const { signal } = upstream;
    signal.throwIfAborted();
    const request = new AbortController();
    let grace: NodeJS.Timeout | undefined;
    let rejectStopped: (reason: unknown) => void = () => undefined;
    const stopped = new Promise<never>((_, reject) => {
      rejectStopped = reject;
    });
    const onAbort = (): void => {
      rejectStopped(abortReason(signal));
      grace = setTimeout(() => request.abort(abortReason(signal)), CANCEL_TIMEOUT_MS);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    const creating = upstreamJson<unknown>(
      {
        method: 'POST',
        url: `${this.#base}/v1/videos/generations`,
        headers: {
          ...this.#authorization(),
          'content-type': 'application/json',
          // upstreamRequest retries a create whose connection broke; a server that honours the key then
          // answers with the task the first attempt made instead of making a second one.
          'idempotency-key': `${job.taskId}-${randomBytes(8).toString('hex')}`,
        },
        body: JSON.stringify(body),
      },
      { ...upstream, signal: request.signal },
    ).then((answer) => readRelayTask(answer, this.label));
    try {
      return await Promise.race([creating, stopped]);
    } finally {
      signal.removeEventListener('abort', onAbort);
      if (signal.aborted) {
        void creating
          .then(
            (task) => this.#cancel(task.id),
            () => undefined,
          )
          .finally(() => clearTimeout(grace));
      }
    }
  }

  /** `GET /v1/tasks/{id}` on the other server. */
  async #read(id: string, calls: UpstreamCalls): Promise<RelayTask> {
    const answer = await upstreamJson<unknown>(
      { method: 'GET', url: this.#taskUrl(id), headers: this.#authorization() },
      this.polling(calls),
    );
    return readRelayTask(answer, this.label);
  }

  /** Asks the other server to stop its task. Servers without the operation answer 404 or 405: ignored. */
  async #cancel(taskId: string): Promise<void> {
    const signal = AbortSignal.timeout(CANCEL_TIMEOUT_MS);
    try {
      const response = await upstreamRequest(
        { method: 'POST', url: `${this.#taskUrl(taskId)}/cancel`, headers: this.#authorization() },
        {
          label: this.label,
          signal,
          deadline: Date.now() + CANCEL_TIMEOUT_MS,
          dispatcher: this.context.dispatcher,
          maxAttempts: 1,
        },
      );
      await response.body.dump();
    } catch {
      // Best effort: the task stays stopped here whatever the other server answers.
    }
  }

  #authorization(): Record<string, string> {
    return { authorization: `Bearer ${this.#options.api_key}` };
  }

  #taskUrl(taskId: string): string {
    return `${this.#base}/v1/tasks/${encodeURIComponent(taskId)}`;
  }
}

/**
 * The `relay` engine: hands a task to another server of this same API (another videogen, or a provider's),
 * polls its task, downloads the video from the signed result link and conforms it. A render that is
 * stopped here asks the other server to cancel its task.
 */
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { TaskFailure } from '../../domain/errors.js';
import type { UpstreamHandle } from '../../domain/upstream-job.js';
import { conformVideo } from '../../media/conform-video.js';
import type { Engine, RenderContext, RenderJob } from '../../ports/engine.js';
import { type EngineContext, pollDispatcherOf } from '../engine-context.js';
import { jobVideoTarget } from '../job-video-target.js';
import { pollDelay } from '../poll-delay.js';
import { withoutSecret } from '../redact-secret.js';
import { fetchUpstreamFile } from '../upstream-file.js';
import { type UpstreamOptions, upstreamJson, upstreamRequest } from '../upstream-request.js';
import { checkRelay } from './relay-check.js';
import type { RelayOptions } from './relay-options.js';
import { type RelayCreateBody, relayCreateBody } from './relay-request.js';
import { isFinalStatus, type RelayTask, readRelayTask, relayFailure } from './relay-task.js';

const DEFAULT_POLL_INTERVAL_MS = 2000;
/** The other server's progress fills this share; the rest is the download and the re-mux. */
const RENDER_SHARE = 0.9;
const DOWNLOADED = 0.95;
/** Cancelling is a courtesy to the other server; a stopped render does not wait long for it. */
const CANCEL_TIMEOUT_MS = 3000;

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The render was aborted.', 'AbortError');
}

export class RelayEngine implements Engine {
  readonly #name: string;
  readonly #options: RelayOptions;
  readonly #context: EngineContext;
  readonly #base: string;
  readonly #label: string;

  constructor(name: string, options: RelayOptions, context: EngineContext) {
    this.#name = name;
    this.#options = options;
    this.#context = context;
    this.#base = options.base_url.replace(/\/+$/, '');
    this.#label = `relay engine "${name}"`;
  }

  get name(): string {
    return this.#name;
  }

  cancelJob(job: UpstreamHandle): Promise<void> {
    return this.#cancel(job.id);
  }

  async check(signal: AbortSignal): Promise<void> {
    const target = {
      label: this.#label,
      base: this.#base,
      apiKey: this.#options.api_key,
      dispatcher: this.#context.dispatcher,
    };
    try {
      await checkRelay(target, signal);
    } catch (error) {
      throw withoutSecret(error, this.#options.api_key);
    }
  }

  async render(job: RenderJob, context: RenderContext): Promise<void> {
    try {
      await this.#render(job, context);
    } catch (error) {
      if (context.signal.aborted) throw abortReason(context.signal);
      throw withoutSecret(error, this.#options.api_key);
    }
  }

  async #render(job: RenderJob, context: RenderContext): Promise<void> {
    const { signal } = context;
    signal.throwIfAborted();
    const upstream: UpstreamOptions = {
      label: this.#label,
      signal,
      // Read at each use: the limit moves when the other videogen accepts the task.
      get deadline() {
        return context.deadline;
      },
      dispatcher: this.#context.dispatcher,
    };
    let reported = 0;
    const report = (fraction: number): void => {
      if (fraction <= reported) return;
      reported = fraction;
      context.onProgress(fraction);
    };

    await mkdir(job.workDir, { recursive: true });
    await mkdir(dirname(job.outputPath), { recursive: true });
    // A task an earlier run of this one created is polled again, never created twice.
    let task: RelayTask | undefined;
    let id: string;
    if (context.resume) id = context.resume.id;
    else {
      task = await this.#create(job, await relayCreateBody(job, this.#options.model), upstream);
      id = task.id;
      await context.onAccepted?.({ id });
    }

    try {
      task = await this.#waitForEnd(task ?? (await this.#read(id, upstream)), upstream, signal, (progress) =>
        report((Math.max(0, Math.min(100, progress)) / 100) * RENDER_SHARE),
      );
    } catch (error) {
      // Stopped here or given up on (the other server stopped answering): nobody wants the video, unless it is
      // stored with the task, whose end decides it.
      if (!context.handsOver?.()) await this.#cancel(id);
      throw error;
    }
    if (task.status !== 'completed') throw relayFailure(task, this.#label);
    report(RENDER_SHARE);
    await context.upstreamDone?.();

    const link = task.results[0];
    if (!link) {
      throw new TaskFailure(
        'upstream_error',
        `${this.#label}: its task ${task.id} completed without a result link.`,
      );
    }
    const raw = join(job.workDir, 'relay-result.mp4');
    // The link is signed, and may be on another host (a storage bucket): the key is not sent with it.
    await fetchUpstreamFile({ method: 'GET', url: new URL(link, `${this.#base}/`) }, raw, upstream);
    report(DOWNLOADED);
    await conformVideo(raw, job.outputPath, jobVideoTarget(job), {
      signal,
      label: this.#label,
      ffmpegPath: this.#context.ffmpegPath,
    });
    context.onProgress(1);
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
    ).then((answer) => readRelayTask(answer, this.#label));
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

  /** Polls until the task is final; `onProgress` gets its percent after every answer. */
  async #waitForEnd(
    first: RelayTask,
    upstream: UpstreamOptions,
    signal: AbortSignal,
    onProgress: (percent: number) => void,
  ): Promise<RelayTask> {
    const interval = this.#options.poll_interval_ms ?? DEFAULT_POLL_INTERVAL_MS;
    const followed = Date.now();
    let task = first;
    for (;;) {
      onProgress(task.progress);
      if (isFinalStatus(task.status)) return task;
      await sleep(pollDelay(interval, Date.now() - followed), undefined, { signal }).catch(() => {
        throw abortReason(signal);
      });
      task = await this.#read(task.id, upstream);
    }
  }

  /** `GET /v1/tasks/{id}` on the other server. */
  async #read(id: string, upstream: UpstreamOptions): Promise<RelayTask> {
    const answer = await upstreamJson<unknown>(
      { method: 'GET', url: this.#taskUrl(id), headers: this.#authorization() },
      { ...upstream, dispatcher: pollDispatcherOf(this.#context) },
    );
    return readRelayTask(answer, this.#label);
  }

  /** Asks the other server to stop its task. Servers without the operation answer 404 or 405: ignored. */
  async #cancel(taskId: string): Promise<void> {
    const signal = AbortSignal.timeout(CANCEL_TIMEOUT_MS);
    try {
      const response = await upstreamRequest(
        { method: 'POST', url: `${this.#taskUrl(taskId)}/cancel`, headers: this.#authorization() },
        { ...this.#upstreamOptions(signal, Date.now() + CANCEL_TIMEOUT_MS), maxAttempts: 1 },
      );
      await response.body.dump();
    } catch {
      // Best effort: the task stays stopped here whatever the other server answers.
    }
  }

  #upstreamOptions(signal: AbortSignal, deadline: number): UpstreamOptions {
    return { label: this.#label, signal, deadline, dispatcher: this.#context.dispatcher };
  }

  #authorization(): Record<string, string> {
    return { authorization: `Bearer ${this.#options.api_key}` };
  }

  #taskUrl(taskId: string): string {
    return `${this.#base}/v1/tasks/${encodeURIComponent(taskId)}`;
  }
}

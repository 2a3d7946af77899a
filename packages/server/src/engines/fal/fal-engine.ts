/**
 * The `fal` engine: hands each job to a video model on fal.ai's queue (fal-client.ts). The body is the model's
 * input, filled from the engines file's template with the job's values and its assets inline as `data:` URLs
 * (fal-request.ts). It follows the request until it is COMPLETED, reads the model's answer (fal-job.ts; a
 * content checker's refusal is `upstream_refused`), downloads the video without the key (fal's media URLs are
 * public) and conforms it; every other way out cancels the request upstream (hosted/hosted-task.ts). fal
 * reports no progress beyond "in queue" and "in progress".
 */
import type { UpstreamHandle } from '../../domain/upstream-job.js';
import type { RenderJob } from '../../ports/engine.js';
import { type EngineContext, pollDispatcherOf } from '../engine-context.js';
import type { HostedStatus } from '../hosted/hosted-task.js';
import { InputTemplate } from '../hosted/input-template.js';
import { RemoteJobEngine, type RemoteJobSteps, type UpstreamCalls } from '../hosted/remote-job-engine.js';
import { fetchUpstreamFile } from '../upstream-file.js';
import { FalQueue, type FalRequest } from './fal-client.js';
import { falOutcome, falQueueState } from './fal-job.js';
import { DEFAULT_RESULT_PATH, FAL_QUEUE_URL, type FalOptions } from './fal-options.js';
import { falInput } from './fal-request.js';

const DEFAULT_POLL_INTERVAL_MS = 2000;

export class FalEngine extends RemoteJobEngine<string> {
  readonly #options: FalOptions;
  readonly #template: InputTemplate;
  readonly #queue: FalQueue;

  /** Throws an Error naming an unknown placeholder in `input`. */
  constructor(name: string, options: FalOptions, context: EngineContext) {
    super('fal', name, context);
    this.#options = options;
    this.#template = new InputTemplate(options.input);
    this.#queue = new FalQueue({
      label: this.label,
      baseUrl: options.base_url ?? FAL_QUEUE_URL,
      apiKey: options.api_key,
      model: options.model,
      dispatcher: context.dispatcher,
      pollDispatcher: pollDispatcherOf(context),
      ...(context.callbackUrl && { webhookUrl: context.callbackUrl }),
    });
  }

  protected get secret(): string {
    return this.#options.api_key;
  }

  protected override get modelSound(): boolean {
    return this.#template.capabilities().audio;
  }

  protected get pollIntervalMs(): number {
    return this.#options.poll_interval_ms ?? DEFAULT_POLL_INTERVAL_MS;
  }

  protected cancelUpstream(job: UpstreamHandle): Promise<void> {
    return this.#queue.cancel(this.#queue.requestOf(job));
  }

  protected checkUpstream(signal: AbortSignal): Promise<void> {
    return this.#queue.checkKey(signal);
  }

  protected steps(job: RenderJob, calls: UpstreamCalls): RemoteJobSteps<string> {
    return {
      submit: async () => {
        const input = await falInput(job, this.#template, this.#options);
        return FalQueue.handleOf(await this.#queue.submit(input, calls));
      },
      poll: async (handle) => this.#poll(this.#queue.requestOf(handle), calls),
      // fal's media URLs need no key, and may be on any host: the key is not sent with them.
      download: (url, path) => fetchUpstreamFile({ method: 'GET', url }, path, this.upstream(calls)),
    };
  }

  /** The request's state; once COMPLETED, what the model answered. */
  async #poll(request: FalRequest, limits: UpstreamCalls): Promise<HostedStatus<string>> {
    const status = await this.#queue.status(request, limits);
    if (status !== 'COMPLETED') return falQueueState(status);
    const answer = await this.#queue.answer(request, limits);
    return falOutcome(answer, this.#options.result_path ?? DEFAULT_RESULT_PATH);
  }
}

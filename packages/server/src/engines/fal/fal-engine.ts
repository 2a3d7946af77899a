/**
 * The `fal` engine: hands each job to a video model on fal.ai's queue (fal-client.ts). The body is the model's
 * input, filled from the engines file's template with the job's values (hosted/input-template.ts; durations,
 * ratios and resolutions mapped to the nearest the model takes) and its assets inline as `data:` URLs (the
 * client's own URL may be a file uploaded here, which fal cannot fetch). It follows the request until it is
 * COMPLETED, reads the model's answer (a content checker's refusal is `upstream_refused`), downloads the video
 * without the key (fal's media URLs are public) and conforms it; every other way out cancels the request
 * upstream (hosted/hosted-task.ts). fal reports no progress beyond "in queue" and "in progress".
 */
import type { UpstreamHandle } from '../../domain/upstream-job.js';
import type { RenderJob } from '../../ports/engine.js';
import { type EngineContext, pollDispatcherOf } from '../engine-context.js';
import { inlineAsset } from '../hosted/asset-data-url.js';
import type { HostedStatus } from '../hosted/hosted-task.js';
import { InputTemplate } from '../hosted/input-template.js';
import { RemoteJobEngine, type RemoteJobSteps, type UpstreamCalls } from '../hosted/remote-job-engine.js';
import { templateValues } from '../hosted/template-values.js';
import { fetchUpstreamFile } from '../upstream-file.js';
import { EXCERPT_CHARS } from '../upstream-request.js';
import { FalQueue, type FalRequest } from './fal-client.js';
import { falFailure, valueAt } from './fal-job.js';
import { DEFAULT_RESULT_PATH, FAL_QUEUE_URL, type FalOptions } from './fal-options.js';

const DEFAULT_POLL_INTERVAL_MS = 2000;

async function dataUrls(assets: RenderJob['images'], most: number): Promise<string[]> {
  return Promise.all(assets.slice(0, most).map(async (asset) => (await inlineAsset(asset)).dataUrl));
}

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
      submit: async () => FalQueue.handleOf(await this.#queue.submit(await this.#input(job), calls)),
      poll: async (handle) => this.#poll(this.#queue.requestOf(handle), calls),
      // fal's media URLs need no key, and may be on any host: the key is not sent with them.
      download: (url, path) => fetchUpstreamFile({ method: 'GET', url }, path, this.upstream(calls)),
    };
  }

  /**
   * The model's input for the job. Only the assets the template has a place for are read and sent: with
   * `unsupported_inputs: drop` the others are left out here.
   */
  async #input(job: RenderJob): Promise<Record<string, unknown>> {
    const takes = this.#template.capabilities();
    const urls = {
      images: await dataUrls(job.images, Math.max(takes.referenceImages, takes.lastFrame ? 2 : 0)),
      videos: await dataUrls(job.videos, takes.referenceVideos),
      audios: await dataUrls(job.audios, takes.referenceAudios),
    };
    return this.#template.fill(templateValues(job, urls, this.#options));
  }

  async #poll(request: FalRequest, limits: UpstreamCalls): Promise<HostedStatus<string>> {
    const status = await this.#queue.status(request, limits);
    if (status === 'IN_QUEUE') return { state: 'queued' };
    if (status === 'IN_PROGRESS') return { state: 'running' };
    const answer = await this.#queue.answer(request, limits);
    if (!answer.ok) return { state: 'failed', failure: falFailure(answer.status, answer.body) };
    const path = this.#options.result_path ?? DEFAULT_RESULT_PATH;
    const url = valueAt(answer.output, path);
    if (typeof url === 'string' && /^https?:\/\//i.test(url)) return { state: 'succeeded', result: url };
    const output = (JSON.stringify(answer.output) ?? '').slice(0, EXCERPT_CHARS);
    return {
      state: 'failed',
      failure: { refused: false, message: `the model's output has no video URL at ${path}: ${output}` },
    };
  }
}

/**
 * The `openai` engine: hands each job to a server with OpenAI's Videos API (OpenAI itself, or SGLang Diffusion
 * and vLLM-Omni serving Wan or HunyuanVideo), in that server's dialect (`server`: its fields, encoding, sizes
 * and durations; video-server-dialect.ts). It creates a video (`POST /v1/videos`, the first image fitted to
 * the chosen size as `input_reference`: openai-request.ts), polls it until it is done (openai-job.ts), downloads
 * its content and conforms it to the job (hosted/remote-job-engine.ts). When the wait ends any other way
 * (cancel, lost lease, the task's time limit), it deletes the video where the server lets it, which on vLLM-Omni
 * stops the work; OpenAI cannot stop a started video and SGLang only forgets it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { TaskFailure } from '../../domain/errors.js';
import type { UpstreamHandle } from '../../domain/upstream-job.js';
import type { RenderJob } from '../../ports/engine.js';
import type { EngineContext } from '../engine-context.js';
import { CANCEL_TIMEOUT_MS } from '../hosted/hosted-task.js';
import { RemoteJobEngine, type RemoteJobSteps, type UpstreamCalls } from '../hosted/remote-job-engine.js';
import { checkTimeLimit, upstreamCheck } from '../upstream-check.js';
import { fetchUpstreamFile } from '../upstream-file.js';
import { excerptOf, UpstreamRefusal, upstreamJson, upstreamRequest } from '../upstream-request.js';
import { openAiStatus, parseVideoObject, type VideoObject } from './openai-job.js';
import type { OpenAiOptions } from './openai-options.js';
import { openAiCreateRequest } from './openai-request.js';
import type { VideoServerDialect } from './video-server-dialect.js';
import { VIDEO_SERVER_DIALECTS } from './video-server-dialects.js';

const DEFAULT_POLL_INTERVAL_MS = 2000;

/** Fields the engine sets itself, which `extra_body` may not replace. */
const OWN_FIELDS = ['model', 'prompt', 'size', 'seconds', 'seed', 'input_reference', 'extra_body'];
const FRAME_FIELDS = ['fps', 'num_frames'];
/** A vLLM-Omni `DELETE` that is still cancelling (409) is asked again this often. */
const CANCEL_RETRY_MS = 250;

export class OpenAiEngine extends RemoteJobEngine<string> {
  readonly #options: OpenAiOptions;
  readonly #dialect: VideoServerDialect;

  /** Throws an Error naming the problem when the options cannot work with the server. */
  constructor(name: string, options: OpenAiOptions, context: EngineContext) {
    super('openai', name, context);
    this.#options = options;
    this.#dialect = VIDEO_SERVER_DIALECTS[options.server ?? 'openai'];
    const own = options.fps === undefined ? OWN_FIELDS : [...OWN_FIELDS, ...FRAME_FIELDS];
    const replaced = Object.keys(options.extra_body ?? {}).filter((field) => own.includes(field));
    if (replaced.length > 0) {
      throw new Error(`extra_body: the engine sets ${replaced.join(', ')} from each request`);
    }
    if (options.frame_step !== undefined && options.fps === undefined) {
      throw new Error('frame_step: goes with fps');
    }
    const problem = this.#dialect.optionsProblem(options);
    if (problem) throw new Error(problem);
  }

  protected get secret(): string | undefined {
    return this.#options.api_key;
  }

  protected override get modelSound(): boolean {
    return this.#dialect.inputs.audio;
  }

  protected get pollIntervalMs(): number {
    return this.#options.poll_interval_ms ?? DEFAULT_POLL_INTERVAL_MS;
  }

  /**
   * `DELETE /v1/videos/{id}`, which on vLLM-Omni stops the work and on SGLang only forgets it; not on a server
   * that refuses to delete a video it is making (OpenAI's own).
   */
  protected async cancelUpstream(job: UpstreamHandle): Promise<void> {
    if (this.#dialect.runningDelete !== 'refused') await this.#cancel(job.id);
  }

  /**
   * `GET /v1/models` (older SGLang Diffusion releases: `GET /models`), authenticated: any answer but 2xx within
   * 10 s is a problem, and so is a list that shows the server will not take the configured `model`.
   */
  protected async checkUpstream(signal: AbortSignal): Promise<void> {
    // The fallback path gets what is left of the first one's 10 s, not 10 s of its own.
    const timeLimit = checkTimeLimit();
    let path = 'v1/models';
    let status = await this.#checkModels(path, signal, timeLimit);
    if (status === 404) {
      path = 'models';
      status = await this.#checkModels(path, signal, timeLimit);
    }
    if (status >= 300) throw new Error(`${this.label}: GET /${path} answered HTTP ${status}.`);
  }

  /**
   * The status of `GET path` (404 included); when it answers a list of models (`{data: [{id}]}`), also checks
   * that the server will take the configured one.
   */
  #checkModels(path: string, signal: AbortSignal, timeLimit: AbortSignal): Promise<number> {
    return upstreamCheck({
      call: { method: 'GET', url: this.#url(path), headers: this.#headers() },
      what: `GET /${path}`,
      label: this.label,
      apiKey: this.#options.api_key,
      dispatcher: this.context.dispatcher,
      signal,
      timeLimit,
      onRefusal: (refusal) => {
        if (refusal.status === 404) return 404;
        throw refusal;
      },
      read: async (response) => {
        const body: unknown = await response.body.json().catch(() => undefined);
        const data = (body as { data?: unknown } | undefined)?.data;
        const models = Array.isArray(data)
          ? data.map((model) => (model as { id?: unknown } | null)?.id).filter((id) => typeof id === 'string')
          : undefined;
        const problem = models && this.#dialect.modelsProblem(models, this.#options.model);
        if (problem) throw new Error(`${this.label}: ${problem}.`);
        return response.statusCode;
      },
    });
  }

  /** The video's id is what the poll that saw it completed gives: its content is downloaded by id. */
  protected steps(job: RenderJob, calls: UpstreamCalls): RemoteJobSteps<string> {
    return {
      submit: async () => ({ id: (await this.#create(job, calls)).id }),
      poll: async ({ id }) => openAiStatus(await this.#read(id, calls)),
      download: (id, path) =>
        fetchUpstreamFile(
          { method: 'GET', url: this.#videoUrl(id, '/content'), headers: this.#headers() },
          path,
          this.upstream(calls),
        ),
    };
  }

  /** `POST /v1/videos` in the server's dialect (openai-request.ts). */
  async #create(job: RenderJob, calls: UpstreamCalls): Promise<VideoObject> {
    const request = await openAiCreateRequest(job, this.#options, this.#dialect, this.label);
    const answer = await upstreamJson<unknown>(
      {
        method: 'POST',
        url: this.#url('v1/videos'),
        headers: { ...this.#headers(), ...request.headers },
        body: request.body,
      },
      this.upstream(calls),
    );
    return this.#videoObject(answer, 'POST /v1/videos');
  }

  /** `GET /v1/videos/{id}`. */
  async #read(id: string, calls: UpstreamCalls): Promise<VideoObject> {
    const answer = await upstreamJson<unknown>(
      { method: 'GET', url: this.#videoUrl(id), headers: this.#headers() },
      Object.assign(this.polling(calls), { finalAnswer: this.#failedVideoAnswer }),
    );
    return this.#videoObject(answer, `GET /v1/videos/${id}`);
  }

  /** On a server whose failed videos answer with an error status: whether this answer is such a video. */
  readonly #failedVideoAnswer = (status: number, body: string): boolean => {
    if (!this.#dialect.failedVideoHasErrorStatus || status < 400) return false;
    try {
      return parseVideoObject(JSON.parse(body))?.status === 'failed';
    } catch {
      return false;
    }
  };

  /**
   * `DELETE /v1/videos/{id}`, best effort within its own short time limit, any failure ignored; asked again
   * while vLLM-Omni answers that it is still cancelling (409).
   */
  async #cancel(id: string): Promise<void> {
    const deadline = Date.now() + CANCEL_TIMEOUT_MS;
    const signal = AbortSignal.timeout(CANCEL_TIMEOUT_MS);
    try {
      for (;;) {
        try {
          const response = await upstreamRequest(
            { method: 'DELETE', url: this.#videoUrl(id), headers: this.#headers() },
            {
              label: this.label,
              signal,
              deadline,
              dispatcher: this.context.dispatcher,
              attemptTimeoutMs: CANCEL_TIMEOUT_MS,
              maxAttempts: 1,
            },
          );
          await response.body.dump();
          return;
        } catch (error) {
          if (!(error instanceof UpstreamRefusal && error.status === 409)) throw error;
          await sleep(CANCEL_RETRY_MS, undefined, { signal });
        }
      }
    } catch {
      // The server may be gone or not support deleting; the task ends the same either way.
    }
  }

  #videoObject(answer: unknown, what: string): VideoObject {
    const video = parseVideoObject(answer);
    if (video) return video;
    throw new TaskFailure(
      'upstream_error',
      `${this.label}: ${what} answered something that is not a video object: ${excerptOf(answer)}`,
    );
  }

  #headers(): Record<string, string> {
    const key = this.#options.api_key;
    return key ? { authorization: `Bearer ${key}` } : {};
  }

  /** `path` under the base URL, which may itself have a path (a proxy's prefix). */
  #url(path: string): URL {
    const base = this.#options.base_url;
    return new URL(path, base.endsWith('/') ? base : `${base}/`);
  }

  #videoUrl(id: string, suffix = ''): URL {
    return this.#url(`v1/videos/${encodeURIComponent(id)}${suffix}`);
  }
}

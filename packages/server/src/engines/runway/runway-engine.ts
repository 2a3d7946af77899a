/**
 * The `runway` engine: hands each job to one of Runway's video models (`POST /v1/image_to_video` or
 * `/v1/text_to_video`, runway-request.ts), follows the task (`GET /v1/tasks/{id}`, runway-job.ts), downloads
 * the video from the signed link in its output (without the key: the link is on Runway's CDN) and conforms it
 * to the job. Every other way out (cancel, lost lease, shutdown, time limit) cancels the task upstream with
 * `DELETE /v1/tasks/{id}`, which stops a pending, throttled or running task. `check()` reads
 * `GET /v1/organization`, which costs no credits.
 */
import type { UpstreamHandle } from '../../domain/upstream-job.js';
import type { RenderJob } from '../../ports/engine.js';
import type { EngineContext } from '../engine-context.js';
import { urlUnder } from '../hosted/hosted-options.js';
import { CANCEL_TIMEOUT_MS } from '../hosted/hosted-task.js';
import { RemoteJobEngine, type RemoteJobSteps, type UpstreamCalls } from '../hosted/remote-job-engine.js';
import { upstreamCheck } from '../upstream-check.js';
import { fetchUpstreamFile } from '../upstream-file.js';
import { upstreamJson, upstreamRequest } from '../upstream-request.js';
import { createdTaskId, runwayTaskStatus } from './runway-job.js';
import { RUNWAY_MODELS } from './runway-models.js';
import { RUNWAY_API_VERSION, RUNWAY_BASE_URL, type RunwayOptions } from './runway-options.js';
import { runwayCreateRequest } from './runway-request.js';

/** Runway: "Consumers of this API should not expect updates more frequent than once every five seconds." */
const DEFAULT_POLL_INTERVAL_MS = 5000;

export class RunwayEngine extends RemoteJobEngine<string> {
  readonly #options: RunwayOptions;
  readonly #base: string;

  constructor(name: string, options: RunwayOptions, context: EngineContext) {
    super('runway', name, context);
    this.#options = options;
    this.#base = options.base_url ?? RUNWAY_BASE_URL;
  }

  protected get secret(): string {
    return this.#options.api_key;
  }

  protected override get modelSound(): boolean {
    return RUNWAY_MODELS[this.#options.model].takesAudio;
  }

  protected get pollIntervalMs(): number {
    return this.#options.poll_interval_ms ?? DEFAULT_POLL_INTERVAL_MS;
  }

  protected cancelUpstream(job: UpstreamHandle): Promise<void> {
    return this.#cancel(job.id);
  }

  /** `GET /v1/organization` with the key and version: any answer but 2xx within 10 s is a problem. */
  protected async checkUpstream(signal: AbortSignal): Promise<void> {
    await upstreamCheck({
      call: { method: 'GET', url: this.#url('v1/organization'), headers: this.#headers() },
      what: 'GET /v1/organization',
      label: this.label,
      apiKey: this.#options.api_key,
      dispatcher: this.context.dispatcher,
      signal,
    });
  }

  protected steps(job: RenderJob, calls: UpstreamCalls): RemoteJobSteps<string> {
    const upstream = this.upstream(calls);
    return {
      submit: async () => {
        const request = await runwayCreateRequest(job, {
          engine: this.name,
          label: this.label,
          model: this.#options.model,
          drop: this.#options.unsupported_inputs === 'drop',
        });
        const answer = await upstreamJson<unknown>(
          {
            method: 'POST',
            url: this.#url(request.path),
            headers: { ...this.#headers(), 'content-type': 'application/json' },
            body: JSON.stringify(request.body),
          },
          upstream,
        );
        return { id: createdTaskId(answer, `POST /${request.path}`, this.label) };
      },
      poll: async ({ id }) => {
        const answer = await upstreamJson<unknown>(
          { method: 'GET', url: this.#taskUrl(id), headers: this.#headers() },
          this.polling(calls),
        );
        return runwayTaskStatus(answer, 'GET /v1/tasks/{id}', this.label);
      },
      // The link is signed and on Runway's CDN: the key is not sent with it.
      download: (url, path) => fetchUpstreamFile({ method: 'GET', url }, path, upstream),
    };
  }

  /**
   * `DELETE /v1/tasks/{id}` (204), best effort within its own short time limit; a 404 means the task is
   * already gone ("safe to ignore", Runway's API reference), and any other failure changes nothing here.
   */
  async #cancel(id: string): Promise<void> {
    try {
      const response = await upstreamRequest(
        { method: 'DELETE', url: this.#taskUrl(id), headers: this.#headers() },
        {
          label: this.label,
          signal: AbortSignal.timeout(CANCEL_TIMEOUT_MS),
          deadline: Date.now() + CANCEL_TIMEOUT_MS,
          dispatcher: this.context.dispatcher,
          attemptTimeoutMs: CANCEL_TIMEOUT_MS,
        },
      );
      await response.body.dump();
    } catch {
      // Gone already (404), or Runway unreachable: the task here ends the same either way.
    }
  }

  #headers(): Record<string, string> {
    return {
      authorization: `Bearer ${this.#options.api_key}`,
      'x-runway-version': this.#options.api_version ?? RUNWAY_API_VERSION,
    };
  }

  #url(path: string): URL {
    return urlUnder(this.#base, path);
  }

  #taskUrl(id: string): URL {
    return this.#url(`v1/tasks/${encodeURIComponent(id)}`);
  }
}

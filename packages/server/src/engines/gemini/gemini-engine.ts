/**
 * The `gemini` engine: Google's Veo models through the Gemini API (ai.google.dev/gemini-api/docs/video). It
 * starts a long-running operation (`POST /v1beta/models/{model}:predictLongRunning`, gemini-request.ts), polls
 * it (`GET /v1beta/{operation name}`, gemini-job.ts), downloads the video it made (veo-download.ts) and
 * conforms it to the job (hosted/remote-job-engine.ts), which also drops the soundtrack Veo 3 always makes unless the
 * request had an audio reference.
 *
 * The Gemini API has no way to cancel a Veo operation (its only cancel route is for batches): on cancel, a
 * lost lease or the time limit the engine stops polling, and the video is made (and billed) upstream anyway.
 */
import type { UpstreamHandle } from '../../domain/upstream-job.js';
import type { RenderJob } from '../../ports/engine.js';
import type { EngineContext } from '../engine-context.js';
import { urlUnder } from '../hosted/hosted-options.js';
import { RemoteJobEngine, type RemoteJobSteps, type UpstreamCalls } from '../hosted/remote-job-engine.js';
import { withinCheckLimit } from '../upstream-check.js';
import { type GeminiCallOptions, geminiJson } from './gemini-client.js';
import { operationName, veoStatus } from './gemini-job.js';
import { type VeoModel, veoModel } from './gemini-models.js';
import { GEMINI_BASE_URL, GEMINI_POLL_INTERVAL_MS, type GeminiOptions } from './gemini-options.js';
import { veoRequest } from './gemini-request.js';
import { downloadVeoVideo } from './veo-download.js';

export class GeminiEngine extends RemoteJobEngine<string> {
  readonly #options: GeminiOptions;
  readonly #veo: VeoModel;
  readonly #baseUrl: string;

  constructor(name: string, options: GeminiOptions, context: EngineContext) {
    super('gemini', name, context);
    this.#options = options;
    this.#veo = veoModel(options.model);
    this.#baseUrl = options.base_url ?? GEMINI_BASE_URL;
  }

  protected get secret(): string {
    return this.#options.api_key;
  }

  protected override get modelSound(): boolean {
    return this.#veo.generation !== '2.0';
  }

  protected get pollIntervalMs(): number {
    return this.#options.poll_interval_ms ?? GEMINI_POLL_INTERVAL_MS;
  }

  /** The Gemini API cannot cancel a Veo operation: stopping the polls is all there is to do. */
  protected async cancelUpstream(_job: UpstreamHandle): Promise<void> {}

  /**
   * `GET /v1beta/models/{model}` with the key: free, and proves both that the key is accepted and that the
   * model is still offered (Google retires Veo models; a retired one answers 404).
   */
  protected async checkUpstream(signal: AbortSignal): Promise<void> {
    const path = `/v1beta/models/${this.#options.model}`;
    const limit = {
      what: `GET ${path}`,
      label: this.label,
      apiKey: this.#options.api_key,
      dispatcher: this.context.dispatcher,
      signal,
    };
    await withinCheckLimit(limit, async (options) => {
      const model = await geminiJson<{ supportedGenerationMethods?: unknown }>(
        { method: 'GET', url: this.#url(path), headers: this.#headers() },
        'model',
        { ...options, model: this.#options.model },
      );
      const methods = model.supportedGenerationMethods;
      if (Array.isArray(methods) && !methods.includes('predictLongRunning')) {
        throw new Error(
          `${this.label}: the model "${this.#options.model}" does not make videos (its methods: ${methods.join(', ')}).`,
        );
      }
    });
  }

  protected steps(job: RenderJob, calls: UpstreamCalls): RemoteJobSteps<string> {
    const options = this.#callOptions(calls);
    return {
      submit: async () => {
        const body = await veoRequest(job, this.#veo, {
          label: this.label,
          model: this.#options.model,
          dropUnsupported: this.#options.unsupported_inputs === 'drop',
        });
        const answer = await geminiJson<unknown>(
          {
            method: 'POST',
            url: this.#url(`/v1beta/models/${this.#options.model}:predictLongRunning`),
            headers: { ...this.#headers(), 'content-type': 'application/json' },
            body: JSON.stringify(body),
          },
          'submit',
          options,
        );
        return { id: operationName(answer, this.label) };
      },
      poll: async ({ id }) => {
        const answer = await geminiJson<unknown>(
          { method: 'GET', url: this.#url(`/v1beta/${id}`), headers: this.#headers() },
          'poll',
          Object.assign(this.polling(calls), { model: this.#options.model }),
        );
        return veoStatus(answer, this.label);
      },
      download: (uri, path) =>
        downloadVeoVideo({ uri, path, apiKey: this.#options.api_key, baseUrl: this.#baseUrl }, options),
    };
  }

  #callOptions(calls: UpstreamCalls): GeminiCallOptions {
    // Assigned, not spread: a spread would read the deadline once, here.
    return Object.assign(this.upstream(calls), { model: this.#options.model });
  }

  #headers(): Record<string, string> {
    return { 'x-goog-api-key': this.#options.api_key };
  }

  #url(path: string): URL {
    return urlUnder(this.#baseUrl, path);
  }
}

/**
 * The `replicate` engine: runs each job as a prediction of a video model hosted on Replicate
 * (https://replicate.com/docs/reference/http). It fills the model's input from the engines file's template
 * (replicate-request.ts), creates the prediction (`POST /v1/models/{owner}/{name}/predictions`, or
 * `POST /v1/predictions` with a `version`), polls `GET /v1/predictions/{id}` until it ends (no `Prefer: wait`:
 * a video takes minutes, longer than Replicate holds a request), downloads the output video and conforms it to
 * the job. On cancel, a lost lease, shutdown or the task's time limit it cancels the prediction
 * (`POST /v1/predictions/{id}/cancel`), which stops it and its billing.
 *
 * The key goes only to the API's own host: output files are on `replicate.delivery`, fetched without it, as
 * the JavaScript SDK fetches them (replicate-javascript `lib/stream.js`, `createFileOutput`). A create that
 * answers 5xx is not sent again, since Replicate may have created the prediction anyway (both SDKs retry a
 * create only on 429); every other call is retried on 429 and 5xx within the task's time limit.
 */
import { TaskFailure } from '../../domain/errors.js';
import type { UpstreamHandle } from '../../domain/upstream-job.js';
import type { RenderJob } from '../../ports/engine.js';
import type { EngineContext } from '../engine-context.js';
import { urlUnder } from '../hosted/hosted-options.js';
import { CANCEL_TIMEOUT_MS } from '../hosted/hosted-task.js';
import { InputTemplate } from '../hosted/input-template.js';
import { RemoteJobEngine, type RemoteJobSteps, type UpstreamCalls } from '../hosted/remote-job-engine.js';
import type { TemplateMapping } from '../hosted/template-values.js';
import { upstreamCheck } from '../upstream-check.js';
import { fetchUpstreamFile } from '../upstream-file.js';
import { excerptOf, UpstreamAnswer, upstreamJson, upstreamRequest } from '../upstream-request.js';
import { type Prediction, parsePrediction, predictionState } from './replicate-job.js';
import {
  REPLICATE_BASE_URL,
  type ReplicateModel,
  type ReplicateOptions,
  replicateModel,
} from './replicate-options.js';
import { predictionInput } from './replicate-request.js';

const DEFAULT_POLL_INTERVAL_MS = 2000;

/** Replicate's problem details (RFC 7807), as far as a 422 carries them. */
interface Problem {
  readonly title?: unknown;
  readonly detail?: unknown;
  readonly invalid_fields?: unknown;
}

function parseProblem(body: string): Problem | undefined {
  try {
    const value: unknown = JSON.parse(body);
    return value !== null && typeof value === 'object' ? (value as Problem) : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a 422 is about the model's input (`invalid_fields` under `input`) rather than the request itself. */
function refusesInput(problem: Problem): boolean {
  const fields = problem.invalid_fields;
  return (
    Array.isArray(fields) &&
    fields.some((field) => {
      const name = (field as { field?: unknown } | null)?.field;
      return typeof name === 'string' && (name === 'input' || name.startsWith('input.'));
    })
  );
}

export class ReplicateEngine extends RemoteJobEngine<string> {
  readonly #options: ReplicateOptions;
  readonly #template: InputTemplate;
  readonly #model: ReplicateModel;
  readonly #baseUrl: string;
  readonly #mapping: TemplateMapping;

  /** Throws an Error naming the problem when the input template has an unknown placeholder. */
  constructor(name: string, options: ReplicateOptions, context: EngineContext) {
    super('replicate', name, context);
    this.#options = options;
    this.#template = new InputTemplate(options.input);
    this.#model = replicateModel(options.model);
    this.#baseUrl = options.base_url ?? REPLICATE_BASE_URL;
    this.#mapping = {
      durations: options.durations,
      aspect_ratios: options.aspect_ratios,
      resolutions: options.resolutions,
      sizes: options.sizes,
    };
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
    return this.#cancel(job.id);
  }

  /** `GET /v1/account` with the key: any answer but 2xx within 10 s is a problem. */
  protected async checkUpstream(signal: AbortSignal): Promise<void> {
    await upstreamCheck({
      call: { method: 'GET', url: this.#url('v1/account'), headers: this.#headers() },
      what: 'GET /v1/account',
      label: this.label,
      apiKey: this.#options.api_key,
      dispatcher: this.context.dispatcher,
      signal,
    });
  }

  protected steps(job: RenderJob, calls: UpstreamCalls): RemoteJobSteps<string> {
    return {
      submit: async () => {
        const input = await predictionInput(job, this.#template, this.#mapping, this.label);
        const created = await this.#create(input, calls);
        const getUrl = this.#ownUrl(created.getUrl);
        return { id: created.id, ...(getUrl && { data: { get_url: getUrl.href } }) };
      },
      poll: async ({ id, data }) => {
        const getUrl = data?.get_url ? this.#ownUrl(data.get_url) : undefined;
        return predictionState(await this.#get(id, getUrl, calls));
      },
      download: (url, path) => this.#download(url, path, calls),
    };
  }

  async #create(input: Record<string, unknown>, calls: UpstreamCalls): Promise<Prediction> {
    const { owner, name, version } = this.#model;
    const path =
      version === undefined
        ? `v1/models/${encodeURIComponent(owner)}/${encodeURIComponent(name)}/predictions`
        : 'v1/predictions';
    const { callbackUrl } = this.context;
    const body = {
      ...(version !== undefined && { version }),
      input,
      // Only the end: the poll it brings forward is the one that finds the prediction over.
      ...(callbackUrl && { webhook: callbackUrl, webhook_events_filter: ['completed'] }),
    };
    let text: string;
    try {
      const response = await upstreamRequest(
        {
          method: 'POST',
          url: this.#url(path),
          headers: { ...this.#headers(), 'content-type': 'application/json' },
          body: JSON.stringify(body),
        },
        { ...this.upstream(calls), finalAnswer: (status) => status === 422 || status >= 500 },
      );
      text = await response.body.text();
    } catch (error) {
      if (error instanceof UpstreamAnswer) throw this.#createFailure(`POST /${path}`, error);
      throw error;
    }
    let answer: unknown;
    try {
      answer = JSON.parse(text);
    } catch {
      answer = text;
    }
    return this.#prediction(answer, `POST /${path}`);
  }

  /** A 422 (Replicate validated the input against the model's schema) or a 5xx, which is not sent again. */
  #createFailure(what: string, answer: UpstreamAnswer): TaskFailure {
    const problem = parseProblem(answer.body);
    if (answer.status === 422 && problem) {
      const title = typeof problem.title === 'string' ? ` ${problem.title}` : '';
      const detail =
        typeof problem.detail === 'string'
          ? problem.detail
              .split('\n')
              .map((line) => line.replace(/^\s*-\s*/, '').trim())
              .filter((line) => line !== '')
              .join('; ')
          : excerptOf(answer.body);
      return new TaskFailure(
        refusesInput(problem) ? 'upstream_refused' : 'upstream_error',
        `${this.label}: ${what} answered HTTP 422${title}: ${detail}`,
      );
    }
    if (answer.status === 422) {
      return new TaskFailure(
        'upstream_error',
        `${this.label}: ${what} answered HTTP 422: ${excerptOf(answer.body)}`,
      );
    }
    return new TaskFailure(
      'upstream_unavailable',
      `${this.label}: ${what} answered HTTP ${answer.status}: ${excerptOf(answer.body)} (not sent again: ` +
        'Replicate may have created the prediction anyway)',
    );
  }

  async #get(id: string, getUrl: URL | undefined, calls: UpstreamCalls): Promise<Prediction> {
    const url = getUrl ?? this.#url(`v1/predictions/${encodeURIComponent(id)}`);
    const answer = await upstreamJson<unknown>(
      { method: 'GET', url, headers: this.#headers() },
      this.polling(calls),
    );
    return this.#prediction(answer, `GET ${url.pathname}`);
  }

  /** `POST /v1/predictions/{id}/cancel`, best effort within its own short time limit; never rejects. */
  async #cancel(id: string): Promise<void> {
    try {
      const response = await upstreamRequest(
        {
          method: 'POST',
          url: this.#url(`v1/predictions/${encodeURIComponent(id)}/cancel`),
          headers: this.#headers(),
        },
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
      // Replicate may be unreachable or the prediction already over; the task ends the same way.
    }
  }

  /** The output video, with the key only where the URL is on the API's own host. */
  async #download(output: string, path: string, calls: UpstreamCalls): Promise<void> {
    const url = URL.canParse(output) ? new URL(output) : undefined;
    if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
      throw new TaskFailure(
        'upstream_error',
        `${this.label}: the prediction's output is not a video URL: ${excerptOf(output)}`,
      );
    }
    const ownHost = url.origin === new URL(this.#baseUrl).origin;
    await fetchUpstreamFile(
      { method: 'GET', url, headers: ownHost ? this.#headers() : {} },
      path,
      this.upstream(calls),
    );
  }

  #prediction(answer: unknown, what: string): Prediction {
    const prediction = parsePrediction(answer);
    if (prediction) return prediction;
    throw new TaskFailure(
      'upstream_error',
      `${this.label}: ${what} answered something that is not a prediction: ${excerptOf(answer)}`,
    );
  }

  /** `urls.get` when it is under the base URL (so the key stays on the API's host); otherwise undefined. */
  #ownUrl(url: string | undefined): URL | undefined {
    if (url === undefined) return undefined;
    try {
      const given = new URL(url);
      const base = new URL(this.#baseUrl.endsWith('/') ? this.#baseUrl : `${this.#baseUrl}/`);
      return given.origin === base.origin && given.pathname.startsWith(base.pathname) ? given : undefined;
    } catch {
      return undefined;
    }
  }

  #headers(): Record<string, string> {
    return { authorization: `Bearer ${this.#options.api_key}` };
  }

  #url(path: string): URL {
    return urlUnder(this.#baseUrl, path);
  }
}

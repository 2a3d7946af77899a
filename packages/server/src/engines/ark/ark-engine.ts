/**
 * The `ark` engine: Seedance on BytePlus ModelArk or Volcengine Ark. It maps the job onto the model's create
 * request (ark-inputs.ts, ark-request.ts), creates the task (`POST /contents/generations/tasks`), polls it
 * (`GET …/tasks/{id}`) until it ends, downloads `content.video_url` (a signed link that expires after 24 h,
 * fetched without the key), and `content.last_frame_url` when the request asked for the last frame, and conforms
 * the video to the job (hosted/remote-job-engine.ts). When the wait ends any other
 * way (cancel, lost lease, the task's time limit), it deletes the task (`DELETE …/tasks/{id}`), which
 * cancels it only while it is still queued: a running task cannot be stopped (409
 * `InvalidAction.RunningTaskDeletion`), runs to its end and is billed, and the engine just stops waiting.
 */

import { TaskFailure } from '../../domain/errors.js';
import type { UpstreamHandle } from '../../domain/upstream-job.js';
import type { RenderJob } from '../../ports/engine.js';
import type { EngineContext } from '../engine-context.js';
import { urlUnder } from '../hosted/hosted-options.js';
import { CANCEL_TIMEOUT_MS } from '../hosted/hosted-task.js';
import { RemoteJobEngine, type RemoteJobSteps, type UpstreamCalls } from '../hosted/remote-job-engine.js';
import { fetchUpstreamFile } from '../upstream-file.js';
import {
  excerptOf,
  isTransientStatus,
  UpstreamAnswer,
  type UpstreamCall,
  type UpstreamOptions,
  upstreamRequest,
} from '../upstream-request.js';
import { checkArk } from './ark-check.js';
import { planArkInputs } from './ark-inputs.js';
import {
  type ArkError,
  type ArkResult,
  arkErrorOf,
  arkTaskStatus,
  createdTaskId,
  createRefusal,
  describeArkError,
} from './ark-job.js';
import { type ArkModelProfile, arkModelProfile } from './ark-models.js';
import {
  ARK_DEFAULT_BASE_URL,
  ARK_DEFAULT_POLL_INTERVAL_MS,
  ARK_MODEL_FAMILIES,
  type ArkOptions,
} from './ark-options.js';
import { arkCreateBody, arkRequestJson } from './ark-request.js';

const TASKS_PATH = 'contents/generations/tasks';

/** The Ark error in an answer's body, if it is one. */
function errorInBody(body: string): ArkError | undefined {
  try {
    return arkErrorOf((JSON.parse(body) as { error?: unknown } | null)?.error);
  } catch {
    return undefined;
  }
}

export class ArkEngine extends RemoteJobEngine<ArkResult> {
  readonly #options: ArkOptions;
  readonly #profile: ArkModelProfile;

  /** Throws an Error naming the problem when the model cannot be identified. */
  constructor(name: string, options: ArkOptions, context: EngineContext) {
    super('ark', name, context);
    this.#options = options;
    const profile = arkModelProfile(options);
    if (!profile) {
      throw new Error(
        `model: "${options.model}" is not a Seedance model id this engine knows; for an endpoint id (ep-…) or a newer model, set model_family to one of ${ARK_MODEL_FAMILIES.join(', ')}`,
      );
    }
    this.#profile = profile;
  }

  protected get secret(): string {
    return this.#options.api_key;
  }

  protected override get modelSound(): boolean {
    return this.#profile.audio;
  }

  protected get pollIntervalMs(): number {
    return this.#options.poll_interval_ms ?? ARK_DEFAULT_POLL_INTERVAL_MS;
  }

  protected cancelUpstream(job: UpstreamHandle): Promise<void> {
    return this.#cancel(job.id);
  }

  protected checkUpstream(signal: AbortSignal): Promise<void> {
    return checkArk(
      {
        label: this.label,
        url: this.#url(`${TASKS_PATH}?page_size=1`),
        apiKey: this.#options.api_key,
        dispatcher: this.context.dispatcher,
      },
      signal,
    );
  }

  protected steps(job: RenderJob, calls: UpstreamCalls): RemoteJobSteps<ArkResult> {
    const upstream = this.upstream(calls);
    return {
      // The inputs are planned here, not before: a resumed job is never submitted, and its run has no pictures.
      submit: async () => {
        const plan = planArkInputs(job, this.#profile, {
          label: this.label,
          drop: this.#options.unsupported_inputs === 'drop',
        });
        const body = await arkCreateBody(
          job,
          this.#profile,
          plan,
          { model: this.#options.model, watermark: this.#options.watermark ?? false, label: this.label },
          {
            label: this.label,
            signal: calls.signal,
            workDir: job.workDir,
            ffmpegPath: this.context.ffmpegPath,
          },
        );
        const { callbackUrl } = this.context;
        const call: UpstreamCall = {
          method: 'POST',
          url: this.#url(TASKS_PATH),
          headers: { ...this.#headers(), 'content-type': 'application/json' },
          body: arkRequestJson(callbackUrl ? { ...body, callback_url: callbackUrl } : body, this.label),
        };
        const answer = await this.#json(call, upstream, (status, error) =>
          createRefusal(this.label, status, error),
        );
        return { id: createdTaskId(answer, this.label) };
      },
      poll: async ({ id }) => {
        const call: UpstreamCall = { method: 'GET', url: this.#taskUrl(id), headers: this.#headers() };
        return arkTaskStatus(await this.#json(call, this.polling(calls)), this.label);
      },
      download: async (result, path) => {
        await this.#download(result.video, path, upstream);
        // Asked for, but the task came without one: the runner takes the last frame from the video instead.
        if (job.lastFramePath && result.lastFrame) {
          await this.#download(result.lastFrame, job.lastFramePath, upstream);
        }
      },
    };
  }

  /**
   * `call`'s JSON answer, retried while transient. A refusal carrying Ark's error envelope becomes
   * `refusal(status, error)` (by default `upstream_error` quoting Ark's code and message).
   */
  async #json(
    call: UpstreamCall,
    options: UpstreamOptions,
    refusal: (status: number, error: ArkError) => TaskFailure = (status, error) =>
      new TaskFailure(
        'upstream_error',
        `${this.label}: ${call.method} ${new URL(call.url).pathname} answered HTTP ${status}: ${describeArkError(error)}`,
      ),
  ): Promise<unknown> {
    let text: string;
    try {
      const answer = await upstreamRequest(call, {
        ...options,
        finalAnswer: (status, body) => !isTransientStatus(status) && errorInBody(body) !== undefined,
      });
      text = await answer.body.text();
    } catch (error) {
      const envelope = error instanceof UpstreamAnswer ? errorInBody(error.body) : undefined;
      if (error instanceof UpstreamAnswer && envelope) throw refusal(error.status, envelope);
      throw error;
    }
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      throw new TaskFailure(
        'upstream_error',
        `${this.label}: ${call.method} ${new URL(call.url).pathname} answered something that is not JSON: ${excerptOf(text)}`,
        { cause: error },
      );
    }
  }

  /** A signed link of the task's, fetched without the key (it is another host's, and signed on its own). */
  async #download(url: string, path: string, options: UpstreamOptions): Promise<void> {
    if (!/^https?:\/\//i.test(url)) {
      throw new TaskFailure('upstream_error', `${this.label}: Ark gave a result link that is not http(s).`);
    }
    await fetchUpstreamFile({ method: 'GET', url }, path, options);
  }

  /** `DELETE …/tasks/{id}`: one try within a short time limit; a refusal (a running task's 409) is expected. */
  async #cancel(id: string): Promise<void> {
    try {
      const answer = await upstreamRequest(
        { method: 'DELETE', url: this.#taskUrl(id), headers: this.#headers() },
        {
          label: this.label,
          signal: AbortSignal.timeout(CANCEL_TIMEOUT_MS),
          deadline: Date.now() + CANCEL_TIMEOUT_MS,
          dispatcher: this.context.dispatcher,
          attemptTimeoutMs: CANCEL_TIMEOUT_MS,
          maxAttempts: 1,
        },
      );
      await answer.body.dump();
    } catch {
      // A running task cannot be cancelled, and Ark may be unreachable; the task ends here either way.
    }
  }

  #headers(): Record<string, string> {
    return { authorization: `Bearer ${this.#options.api_key}`, accept: 'application/json' };
  }

  #url(path: string): URL {
    return urlUnder(this.#options.base_url ?? ARK_DEFAULT_BASE_URL, path);
  }

  #taskUrl(id: string): URL {
    return this.#url(`${TASKS_PATH}/${encodeURIComponent(id)}`);
  }
}

/**
 * The `openai` engine: hands each job to a server with OpenAI's Videos API (OpenAI itself, or SGLang Diffusion
 * and vLLM-Omni serving Wan or HunyuanVideo), in that server's dialect (`server`: its fields, encoding, sizes
 * and durations; video-server-dialect.ts). It creates a video (`POST /v1/videos`, the first image fitted to
 * the chosen size as `input_reference`), polls it until it is done, downloads its content and conforms it to
 * the job. When the wait ends any other way (cancel, lost lease, the task's time limit), it deletes the video
 * where the server lets it, which on vLLM-Omni stops the work; OpenAI cannot stop a started video and SGLang
 * only forgets it.
 */
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { TaskFailure } from '../../domain/errors.js';
import type { UpstreamHandle } from '../../domain/upstream-job.js';
import { conformVideo } from '../../media/conform-video.js';
import type { Engine, RenderContext, RenderJob } from '../../ports/engine.js';
import { type EngineContext, pollDispatcherOf } from '../engine-context.js';
import { frameCount } from '../frame-count.js';
import { jobVideoTarget } from '../job-video-target.js';
import { pollDelay } from '../poll-delay.js';
import { withoutSecret } from '../redact-secret.js';
import { chooseSeconds, chooseSize, parseSize } from '../size-mapping.js';
import { checkTimeLimit, upstreamCheck } from '../upstream-check.js';
import { fetchUpstreamFile } from '../upstream-file.js';
import { type UpstreamOptions, UpstreamRefusal, upstreamJson, upstreamRequest } from '../upstream-request.js';
import { readImageUpload } from './image-upload.js';
import type { OpenAiOptions } from './openai-options.js';
import { parseVideoObject, type VideoObject } from './video-object.js';
import type { VideoServerDialect } from './video-server-dialect.js';
import { VIDEO_SERVER_DIALECTS } from './video-server-dialects.js';

const DEFAULT_POLL_INTERVAL_MS = 2000;
/** Generation takes this share of the progress; downloading and conforming the result the rest. */
const GENERATION_SHARE = 0.9;
const DOWNLOADED = 0.93;
const CANCEL_TIMEOUT_MS = 5000;
const EXCERPT_CHARS = 300;

/** Fields the engine sets itself, which `extra_body` may not replace. */
const OWN_FIELDS = ['model', 'prompt', 'size', 'seconds', 'seed', 'input_reference', 'extra_body'];
const FRAME_FIELDS = ['fps', 'num_frames'];
/** A vLLM-Omni `DELETE` that is still cancelling (409) is asked again this often. */
const CANCEL_RETRY_MS = 250;

function clamp01(value: number): number {
  return Math.min(1, Math.max(0, value));
}

export class OpenAiEngine implements Engine {
  readonly #name: string;
  readonly #options: OpenAiOptions;
  readonly #context: EngineContext;
  readonly #label: string;
  readonly #dialect: VideoServerDialect;

  /** Throws an Error naming the problem when the options cannot work with the server. */
  constructor(name: string, options: OpenAiOptions, context: EngineContext) {
    this.#name = name;
    this.#options = options;
    this.#context = context;
    this.#label = `openai engine "${name}"`;
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

  get name(): string {
    return this.#name;
  }

  /** Not on a server that refuses to delete a video it is making (OpenAI's own), as `render` does not either. */
  async cancelJob(job: UpstreamHandle): Promise<void> {
    if (this.#dialect.runningDelete !== 'refused') await this.#cancel(job.id);
  }

  /**
   * `GET /v1/models` (older SGLang Diffusion releases: `GET /models`), authenticated: any answer but 2xx within
   * 10 s is a problem, and so is a list that shows the server will not take the configured `model`.
   */
  async check(signal: AbortSignal): Promise<void> {
    // The fallback path gets what is left of the first one's 10 s, not 10 s of its own.
    const timeLimit = checkTimeLimit();
    let path = 'v1/models';
    let status = await this.#checkModels(path, signal, timeLimit);
    if (status === 404) {
      path = 'models';
      status = await this.#checkModels(path, signal, timeLimit);
    }
    if (status >= 300) throw new Error(`${this.#label}: GET /${path} answered HTTP ${status}.`);
  }

  /**
   * The status of `GET path` (404 included); when it answers a list of models (`{data: [{id}]}`), also checks
   * that the server will take the configured one.
   */
  #checkModels(path: string, signal: AbortSignal, timeLimit: AbortSignal): Promise<number> {
    return upstreamCheck({
      call: { method: 'GET', url: this.#url(path), headers: this.#headers() },
      what: `GET /${path}`,
      label: this.#label,
      apiKey: this.#options.api_key,
      dispatcher: this.#context.dispatcher,
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
        if (problem) throw new Error(`${this.#label}: ${problem}.`);
        return response.statusCode;
      },
    });
  }

  async render(job: RenderJob, context: RenderContext): Promise<void> {
    const { signal } = context;
    signal.throwIfAborted();
    let reported = 0;
    const progress = (fraction: number): void => {
      if (fraction <= reported) return;
      reported = fraction;
      context.onProgress(fraction);
    };
    try {
      await mkdir(job.workDir, { recursive: true });
      await mkdir(dirname(job.outputPath), { recursive: true });
      // A video an earlier run of the task created is polled again, never created twice.
      const { id, created } = context.resume
        ? { id: context.resume.id, created: undefined }
        : await this.#submit(job, context);
      await this.#waitUntilDone(id, created, context, progress);
      await context.upstreamDone?.();
      const raw = join(job.workDir, 'upstream-video');
      await fetchUpstreamFile(
        { method: 'GET', url: this.#videoUrl(id, '/content'), headers: this.#headers() },
        raw,
        this.#upstreamOptions(context),
      );
      progress(DOWNLOADED);
      await conformVideo(raw, job.outputPath, jobVideoTarget(job), {
        signal,
        label: this.#label,
        ffmpegPath: this.#context.ffmpegPath,
      });
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      throw withoutSecret(error, this.#options.api_key);
    }
    progress(1);
  }

  /** Creates the video and waits until its id is stored with the task. */
  async #submit(job: RenderJob, context: RenderContext): Promise<{ id: string; created: VideoObject }> {
    const created = await this.#create(job, context);
    await context.onAccepted?.({ id: created.id });
    return { id: created.id, created };
  }

  /** `POST /v1/videos` in the server's dialect, with the frame size and duration mapped onto what it takes. */
  async #create(job: RenderJob, context: RenderContext): Promise<VideoObject> {
    const options = this.#options;
    const size = chooseSize(job.frame, options.sizes ?? this.#dialect.defaultSizes(options.model));
    const seconds = chooseSeconds(job.params.duration, options.seconds ?? this.#dialect.defaultSeconds);
    const first = job.images[0];
    const request = this.#dialect.createRequest({
      model: options.model,
      prompt: job.params.prompt,
      size,
      seconds,
      seed: job.params.seed,
      frames:
        options.fps === undefined
          ? undefined
          : { fps: options.fps, count: frameCount(seconds * options.fps, options.frame_step) },
      extra: options.extra_body ?? {},
      image: first && (await readImageUpload(first.path, parseSize(size), this.#label)),
    });
    const answer = await upstreamJson<unknown>(
      {
        method: 'POST',
        url: this.#url('v1/videos'),
        headers: { ...this.#headers(), ...request.headers },
        body: request.body,
      },
      this.#upstreamOptions(context),
    );
    return this.#videoObject(answer, 'POST /v1/videos');
  }

  /**
   * Polls the video until it is completed, reporting its progress, from its creation's answer or (resumed) its
   * first read. Deletes it upstream when the wait ends any other way than completed or failed (the client's
   * cancel, the time limit, the server going away), unless the video is stored with the task, whose end decides it.
   */
  async #waitUntilDone(
    id: string,
    created: VideoObject | undefined,
    context: RenderContext,
    progress: (fraction: number) => void,
  ): Promise<void> {
    let video = created;
    const followed = Date.now();
    try {
      video ??= await this.#read(id, context);
      while (video.status !== 'completed') {
        if (video.status === 'failed') {
          const reason = video.error?.message ?? video.error?.code ?? 'no reason given';
          throw new TaskFailure('upstream_error', `${this.#label}: the server failed the video: ${reason}`);
        }
        if (video.progress !== undefined) progress(GENERATION_SHARE * clamp01(video.progress / 100));
        const remaining = context.deadline - Date.now();
        if (remaining <= 0) {
          const done = video.progress === undefined ? '' : `, ${Math.round(video.progress)}% done`;
          throw new TaskFailure(
            'timeout',
            `${this.#label}: the video was still ${video.status.replace('_', ' ')}${done} when the task's time limit ran out.`,
          );
        }
        const interval = Math.min(
          pollDelay(this.#options.poll_interval_ms ?? DEFAULT_POLL_INTERVAL_MS, Date.now() - followed),
          remaining,
        );
        await sleep(interval, undefined, { signal: context.signal }).catch(() => {
          throw context.signal.reason;
        });
        video = await this.#read(id, context);
      }
    } catch (error) {
      if (video?.status !== 'failed' && this.#dialect.runningDelete !== 'refused' && !context.handsOver?.())
        await this.#cancel(id);
      throw error;
    }
    progress(GENERATION_SHARE);
  }

  /** `GET /v1/videos/{id}`. */
  async #read(id: string, context: RenderContext): Promise<VideoObject> {
    const answer = await upstreamJson<unknown>(
      { method: 'GET', url: this.#videoUrl(id), headers: this.#headers() },
      {
        ...this.#upstreamOptions(context),
        dispatcher: pollDispatcherOf(this.#context),
        finalAnswer: this.#failedVideoAnswer,
      },
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
              label: this.#label,
              signal,
              deadline,
              dispatcher: this.#context.dispatcher,
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
    const text = JSON.stringify(answer) ?? String(answer);
    const excerpt = text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS)}…` : text;
    throw new TaskFailure(
      'upstream_error',
      `${this.#label}: ${what} answered something that is not a video object: ${excerpt}`,
    );
  }

  #upstreamOptions(context: RenderContext): UpstreamOptions {
    return {
      label: this.#label,
      signal: context.signal,
      deadline: context.deadline,
      dispatcher: this.#context.dispatcher,
    };
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

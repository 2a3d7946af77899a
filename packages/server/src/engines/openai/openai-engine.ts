/**
 * The `openai` engine: hands each job to a server with OpenAI's Videos API (SGLang Diffusion and vLLM-Omni
 * serving Wan or HunyuanVideo, or OpenAI itself). It creates a video (`POST /v1/videos`, multipart with the
 * first image as `input_reference` when the job has one), polls it until it is done, downloads its content
 * and conforms it to the job. An abort deletes the upstream video, so the server stops working on it; the
 * task's time limit running out while the server is still busy is `timeout`.
 */
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { FormData } from 'undici';
import { TaskFailure } from '../../errors.js';
import { conformVideo } from '../../media/conform-video.js';
import type { Engine, RenderContext, RenderJob } from '../../ports/engine.js';
import type { EngineContext } from '../engine-context.js';
import { jobVideoTarget } from '../job-video-target.js';
import { redactSecret, withoutSecret } from '../redact-secret.js';
import { fetchUpstreamFile } from '../upstream-file.js';
import {
  type UpstreamBody,
  type UpstreamCall,
  type UpstreamOptions,
  UpstreamRefusal,
  upstreamJson,
  upstreamRequest,
} from '../upstream-request.js';
import { readImageUpload } from './image-upload.js';
import type { OpenAiOptions } from './openai-options.js';
import { chooseSeconds, chooseSize } from './size-mapping.js';
import { parseVideoObject, type VideoObject } from './video-object.js';

const DEFAULT_POLL_INTERVAL_MS = 2000;
/** Generation takes this share of the progress; downloading and conforming the result the rest. */
const GENERATION_SHARE = 0.9;
const DOWNLOADED = 0.93;
const CANCEL_TIMEOUT_MS = 5000;
const CHECK_TIMEOUT_MS = 10_000;
const EXCERPT_CHARS = 300;

function formValue(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

function clamp01(value: number): number {
  return Math.min(1, Math.max(0, value));
}

export class OpenAiEngine implements Engine {
  readonly #name: string;
  readonly #options: OpenAiOptions;
  readonly #context: EngineContext;
  readonly #label: string;

  constructor(name: string, options: OpenAiOptions, context: EngineContext) {
    this.#name = name;
    this.#options = options;
    this.#context = context;
    this.#label = `openai engine "${name}"`;
  }

  get name(): string {
    return this.#name;
  }

  /**
   * `GET /v1/models` as OpenAI and vLLM-Omni serve it, else SGLang Diffusion's `GET /models`; any answer but
   * 2xx within 10 s is a problem.
   */
  async check(signal: AbortSignal): Promise<void> {
    const timeout = AbortSignal.timeout(CHECK_TIMEOUT_MS);
    const both = AbortSignal.any([signal, timeout]);
    let path = 'v1/models';
    try {
      let status = await this.#statusOf(path, both);
      if (status === 404) {
        path = 'models';
        status = await this.#statusOf(path, both);
      }
      if (status >= 300) throw new Error(`${this.#label}: GET /${path} answered HTTP ${status}.`);
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (timeout.aborted) {
        throw new Error(`${this.#label}: GET /${path} did not answer within ${CHECK_TIMEOUT_MS / 1000} s.`);
      }
      const message = error instanceof Error ? error.message : String(error);
      throw new Error(redactSecret(message, this.#options.api_key));
    }
  }

  async #statusOf(path: string, signal: AbortSignal): Promise<number> {
    const call: UpstreamCall = { method: 'GET', url: this.#url(path), headers: this.#headers() };
    try {
      const response = await upstreamRequest(call, {
        label: this.#label,
        signal,
        deadline: Date.now() + CHECK_TIMEOUT_MS,
        dispatcher: this.#context.dispatcher,
        attemptTimeoutMs: CHECK_TIMEOUT_MS,
        maxAttempts: 1,
      });
      await response.body.dump();
      return response.statusCode;
    } catch (error) {
      if (error instanceof UpstreamRefusal && error.status === 404) return 404;
      throw error;
    }
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
      const created = await this.#create(job, context);
      await this.#waitUntilDone(created, context, progress);
      const raw = join(job.workDir, 'upstream-video');
      await fetchUpstreamFile(
        { method: 'GET', url: this.#videoUrl(created.id, '/content'), headers: this.#headers() },
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

  /** `POST /v1/videos`: JSON for a text job, multipart with the first image for a job that has one. */
  async #create(job: RenderJob, context: RenderContext): Promise<VideoObject> {
    const fields: Record<string, unknown> = {
      model: this.#options.model,
      prompt: job.params.prompt,
      size: chooseSize(job.frame, this.#options.sizes),
      // OpenAI's API takes the duration as a string ("4"); extra_body can override it for servers that don't.
      seconds: String(chooseSeconds(job.params.duration, this.#options.seconds)),
      seed: job.params.seed,
      ...this.#options.extra_body,
    };
    const image = job.images[0];
    let body: UpstreamBody;
    const headers = this.#headers();
    if (image) {
      const upload = await readImageUpload(image.path);
      const form = new FormData();
      for (const [name, value] of Object.entries(fields)) {
        const text = formValue(value);
        if (text !== undefined) form.append(name, text);
      }
      form.append('input_reference', new Blob([upload.bytes], { type: upload.contentType }), upload.fileName);
      body = form;
    } else {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(fields);
    }
    const url = this.#url('v1/videos');
    const answer = await upstreamJson<unknown>(
      { method: 'POST', url, headers, body },
      this.#upstreamOptions(context),
    );
    return this.#videoObject(answer, 'POST /v1/videos');
  }

  /**
   * Polls the video until it is completed, reporting its progress. Deletes it upstream when the wait ends
   * any other way than completed or failed: an abort, the time limit, the server going away.
   */
  async #waitUntilDone(
    created: VideoObject,
    context: RenderContext,
    progress: (fraction: number) => void,
  ): Promise<void> {
    let video = created;
    try {
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
        const interval = Math.min(this.#options.poll_interval_ms ?? DEFAULT_POLL_INTERVAL_MS, remaining);
        await sleep(interval, undefined, { signal: context.signal }).catch(() => {
          throw context.signal.reason;
        });
        const path = `GET /v1/videos/${created.id}`;
        const answer = await upstreamJson<unknown>(
          { method: 'GET', url: this.#videoUrl(created.id), headers: this.#headers() },
          this.#upstreamOptions(context),
        );
        video = this.#videoObject(answer, path);
      }
    } catch (error) {
      if (video.status !== 'failed') await this.#cancel(created.id);
      throw error;
    }
    progress(GENERATION_SHARE);
  }

  /** `DELETE /v1/videos/{id}`, best effort: its own short time limit, and any failure ignored. */
  async #cancel(id: string): Promise<void> {
    try {
      const response = await upstreamRequest(
        { method: 'DELETE', url: this.#videoUrl(id), headers: this.#headers() },
        {
          label: this.#label,
          signal: AbortSignal.timeout(CANCEL_TIMEOUT_MS),
          deadline: Date.now() + CANCEL_TIMEOUT_MS,
          dispatcher: this.#context.dispatcher,
          attemptTimeoutMs: CANCEL_TIMEOUT_MS,
          maxAttempts: 1,
        },
      );
      await response.body.dump();
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

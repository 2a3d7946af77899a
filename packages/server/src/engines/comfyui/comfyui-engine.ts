/**
 * The `comfyui` engine: runs the operator's ComfyUI workflow (exported in API format, with placeholders
 * filled from the job) on a ComfyUI server. It uploads the images the workflow uses, queues the prompt,
 * follows it over the websocket (or by polling `/history` when the socket is not available), downloads the
 * video the workflow saved and conforms it to the contract's MP4.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { dirname, extname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { TaskFailure } from '../../domain/errors.js';
import type { UpstreamHandle } from '../../domain/upstream-job.js';
import { conformVideo } from '../../media/conform-video.js';
import type { Engine, RenderContext, RenderJob } from '../../ports/engine.js';
import { type EngineContext, pollDispatcherOf } from '../engine-context.js';
import { jobVideoTarget } from '../job-video-target.js';
import { abortReason, untilAborted } from '../until-aborted.js';
import { ComfyUiClient, type QueuedPrompt } from './comfyui-client.js';
import type { ComfyUiOptions } from './comfyui-options.js';
import { type HistoryEntry, historyOutcome, type OutputFile, pickOutputFile } from './history-result.js';
import { ProgressSocket, SocketLost } from './progress-socket.js';
import { SamplingProgress } from './sampling-progress.js';
import { imageIndexFor, jobValues, type Workflow, WorkflowTemplate } from './workflow-template.js';

const DEFAULT_POLL_INTERVAL_MS = 1_000;
const SOCKET_OPEN_TIMEOUT_MS = 10_000;
/** After an abort, how long a `POST /prompt` already sent may still answer (its answer names what to cancel). */
const QUEUE_GRACE_MS = 5_000;
/** Sampling fills progress up to here; the rest is download and conversion. */
const SAMPLING_SHARE = 0.9;
const DOWNLOADED = 0.95;
/** Without the websocket, every this many history polls also check that the prompt is still queued. */
const POLLS_PER_QUEUE_CHECK = 5;
/** With the websocket, history and queue are checked this many times less often than `poll_interval_ms`. */
const WATCHDOG_SLOWDOWN = 5;

interface PollOptions {
  readonly intervalMs: number;
  /** Stops polling (rejecting) when it aborts. */
  readonly stop: AbortSignal;
  /** Check the queue every this many polls (default POLLS_PER_QUEUE_CHECK). */
  readonly queueCheckEvery?: number;
  /** Sleep before the first poll. */
  readonly waitFirst?: boolean;
}

function safeName(text: string): string {
  return text.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 80);
}

/** The output's extension, for the raw file's name (ffmpeg reads the content, not the name). */
function safeExtension(filename: string): string {
  const extension = extname(filename).toLowerCase();
  return /^\.[a-z0-9]{1,8}$/.test(extension) ? extension : '.mp4';
}

export class ComfyUiEngine implements Engine {
  readonly #name: string;
  readonly #label: string;
  readonly #workflowPath: string;
  readonly #template: WorkflowTemplate;
  readonly #outputNode: string | undefined;
  readonly #pollIntervalMs: number;
  readonly #client: ComfyUiClient;
  readonly #ffmpegPath: string | undefined;

  constructor(name: string, options: ComfyUiOptions, context: EngineContext) {
    this.#name = name;
    this.#label = `comfyui engine "${name}"`;
    this.#workflowPath = resolve(context.baseDir, options.workflow);
    this.#template = this.#loadWorkflow();
    if (options.output_node !== undefined && !this.#template.hasNode(options.output_node)) {
      throw new Error(
        `${this.#label}: output_node "${options.output_node}" is not a node of the workflow ${this.#workflowPath}.`,
      );
    }
    this.#outputNode = options.output_node;
    this.#pollIntervalMs = options.poll_interval_ms ?? DEFAULT_POLL_INTERVAL_MS;
    this.#ffmpegPath = context.ffmpegPath;
    this.#client = new ComfyUiClient({
      baseUrl: options.base_url,
      label: this.#label,
      apiKey: options.api_key,
      dispatcher: context.dispatcher,
      pollDispatcher: pollDispatcherOf(context),
    });
  }

  get name(): string {
    return this.#name;
  }

  cancelJob(job: UpstreamHandle): Promise<void> {
    return this.#client.cancel(job.id);
  }

  /** The server answers `/system_stats`, and the workflow file is still there and still valid. */
  async check(signal: AbortSignal): Promise<void> {
    this.#loadWorkflow();
    await this.#client.systemStats(signal);
  }

  #loadWorkflow(): WorkflowTemplate {
    try {
      return WorkflowTemplate.load(this.#workflowPath);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(`${this.#label}: ${reason}`, { cause: error });
    }
  }

  async render(job: RenderJob, context: RenderContext): Promise<void> {
    const { signal } = context;
    signal.throwIfAborted();
    const imageIndexes = this.#imageIndexes(job);
    await mkdir(job.workDir, { recursive: true });
    await mkdir(dirname(job.outputPath), { recursive: true });

    // A resumed prompt's progress goes to the client that queued it: the same ID again.
    const { resume } = context;
    const clientId = resume?.data?.client_id ?? randomUUID();
    const progress = new SamplingProgress(this.#template.samplerNodes(), SAMPLING_SHARE);
    let reported = 0;
    const report = (fraction: number): void => {
      if (fraction <= reported) return;
      reported = fraction;
      context.onProgress(fraction);
    };
    let promptId: string | undefined;
    let cancelling: Promise<void> | undefined;
    const cancel = (): Promise<void> => {
      if (promptId === undefined) return Promise.resolve();
      cancelling ??= this.#client.cancel(promptId);
      return cancelling;
    };
    // Opened before the prompt is queued, so no message about it is missed.
    const socket = await ProgressSocket.open(this.#client.socketUrl(clientId), {
      headers: this.#client.headers(),
      dispatcher: this.#client.dispatcher,
      signal,
      timeoutMs: SOCKET_OPEN_TIMEOUT_MS,
      label: this.#label,
    }).catch(() => {
      if (signal.aborted) throw abortReason(signal);
      return undefined;
    });

    try {
      let queued: QueuedPrompt;
      if (resume) {
        // Queued by an earlier run of the task: followed again, never queued twice.
        const skippedOutputs = resume.data?.skipped_outputs;
        queued = { promptId: resume.id, ...(skippedOutputs !== undefined && { skippedOutputs }) };
      } else {
        const values = jobValues(job);
        for (const [placeholder, name] of await this.#uploadImages(job, imageIndexes, context)) {
          values.set(placeholder, name);
        }
        const workflow = this.#template.fill(values);
        queued = await this.#queue(workflow, clientId, context, (id) => {
          promptId = id;
          if (signal.aborted && !context.handsOver?.()) void cancel();
        });
        const data: Record<string, string> = { client_id: clientId };
        if (queued.skippedOutputs !== undefined) data.skipped_outputs = queued.skippedOutputs;
        await context.onAccepted?.({ id: queued.promptId, data });
      }
      promptId = queued.promptId;

      const entry = socket
        ? await this.#follow(socket, promptId, context, (node, value, max) => {
            const fraction = progress.update(node, value, max);
            if (fraction !== undefined) report(fraction);
          })
        : await this.#poll(promptId, context, { intervalMs: this.#pollIntervalMs, stop: signal });
      report(SAMPLING_SHARE);
      await context.upstreamDone?.();

      const file = this.#outputFile(entry, queued.skippedOutputs);
      const raw = join(job.workDir, `comfyui-output${safeExtension(file.filename)}`);
      await this.#client.download(file, raw, context);
      report(DOWNLOADED);
      await conformVideo(raw, job.outputPath, jobVideoTarget(job), {
        signal,
        label: this.#label,
        ffmpegPath: this.#ffmpegPath,
      });
    } catch (error) {
      await rm(job.outputPath, { force: true });
      if (signal.aborted) {
        if (!context.handsOver?.()) await cancel();
        throw abortReason(signal);
      }
      if (error instanceof TaskFailure) throw error;
      const reason = error instanceof Error ? error.message : String(error);
      throw new TaskFailure('generation_failed', `${this.#label} failed: ${reason}`, { cause: error });
    } finally {
      socket?.close();
    }
    report(1);
  }

  /** The video to fetch; when there is none, what ComfyUI said of the outputs it dropped is the likely reason. */
  #outputFile(entry: HistoryEntry, skippedOutputs: string | undefined): OutputFile {
    try {
      return pickOutputFile(entry, this.#outputNode, this.#label);
    } catch (error) {
      if (!(error instanceof TaskFailure) || skippedOutputs === undefined) throw error;
      throw new TaskFailure(
        error.code,
        `${error.message} ComfyUI did not run the outputs that failed its validation: ${skippedOutputs}`,
      );
    }
  }

  /** Which job image each image placeholder stands for; a missing one is the request's fault. */
  #imageIndexes(job: RenderJob): Map<string, number> {
    const indexes = new Map<string, number>();
    for (const placeholder of this.#template.imagePlaceholders) {
      const index = imageIndexFor(placeholder, job.images.length);
      if (typeof index === 'string') throw new TaskFailure('invalid_asset', `${this.#label}: ${index}.`);
      indexes.set(placeholder, index);
    }
    return indexes;
  }

  /** Uploads each job image the workflow uses, once; resolves with placeholder → the name ComfyUI gave it. */
  async #uploadImages(
    job: RenderJob,
    indexes: ReadonlyMap<string, number>,
    context: RenderContext,
  ): Promise<Map<string, string>> {
    const names = new Map<string, string>();
    const uploaded = new Map<number, string>();
    for (const [placeholder, index] of indexes) {
      let name = uploaded.get(index);
      const asset = job.images[index];
      if (name === undefined && asset) {
        name = await this.#client.uploadImage(
          asset.path,
          `videogen-${safeName(job.taskId)}-image-${index + 1}`,
          context,
        );
        uploaded.set(index, name);
      }
      if (name !== undefined) names.set(placeholder, name);
    }
    return names;
  }

  /**
   * Queues the workflow. An abort does not cut the request off: ComfyUI may already have queued the prompt,
   * and only its answer names the prompt to cancel; `onQueued` hears the ID even when it comes after an abort.
   */
  async #queue(
    workflow: Workflow,
    clientId: string,
    context: RenderContext,
    onQueued: (promptId: string) => void,
  ): Promise<QueuedPrompt> {
    const { signal } = context;
    const request = new AbortController();
    const stopLater = (): void => {
      setTimeout(() => request.abort(abortReason(signal)), QUEUE_GRACE_MS).unref();
    };
    signal.addEventListener('abort', stopLater, { once: true });
    const queued = this.#client
      .queuePrompt(workflow, clientId, { signal: request.signal, deadline: context.deadline })
      .then((answer) => {
        onQueued(answer.promptId);
        return answer;
      });
    // Rejections after the render gave up on the request have nobody to tell.
    queued.catch(() => undefined);
    try {
      return await untilAborted(queued, signal);
    } finally {
      signal.removeEventListener('abort', stopLater);
    }
  }

  /**
   * Follows the prompt over the websocket. History is still checked now and then, so a socket that goes
   * quiet (a proxy dropping it without a word) or a prompt deleted from the queue does not hang the render.
   */
  async #follow(
    socket: ProgressSocket,
    promptId: string,
    context: RenderContext,
    onProgress: (node: string | undefined, value: number, max: number) => void,
  ): Promise<HistoryEntry> {
    const stopWatching = new AbortController();
    const watchdog = this.#poll(promptId, context, {
      intervalMs: this.#pollIntervalMs * WATCHDOG_SLOWDOWN,
      queueCheckEvery: 1,
      waitFirst: true,
      stop: AbortSignal.any([context.signal, stopWatching.signal]),
    });
    watchdog.catch(() => undefined);
    try {
      const finished = socket.finished(promptId, onProgress, context.signal).then(() => undefined);
      const entry = await Promise.race([finished, watchdog]);
      if (entry) return entry;
    } catch (error) {
      if (!(error instanceof SocketLost)) throw error;
    } finally {
      stopWatching.abort();
    }
    // Finished (history has it now), or the socket was lost: poll at the full rate.
    return this.#poll(promptId, context, { intervalMs: this.#pollIntervalMs, stop: context.signal });
  }

  /** Polls `/history/{id}` until the prompt has finished; checks now and then that it is still queued. */
  async #poll(promptId: string, context: RenderContext, options: PollOptions): Promise<HistoryEntry> {
    const { intervalMs, stop } = options;
    const queueCheckEvery = options.queueCheckEvery ?? POLLS_PER_QUEUE_CHECK;
    const wait = (): Promise<void> =>
      sleep(intervalMs, undefined, { signal: stop }).catch(() => {
        throw context.signal.aborted ? abortReason(context.signal) : stop.reason;
      });
    if (options.waitFirst) await wait();
    const finished = async (): Promise<HistoryEntry | undefined> => {
      const entry = await this.#client.history(promptId, context);
      return historyOutcome(entry, this.#label) === 'done' ? entry : undefined;
    };
    for (let polls = 1; ; polls++) {
      const entry = await finished();
      if (entry) return entry;
      if (polls % queueCheckEvery === 0 && !(await this.#client.isQueued(promptId, context))) {
        // It may have finished between the two calls.
        const last = await finished();
        if (last) return last;
        throw new TaskFailure(
          'upstream_error',
          `${this.#label}: prompt ${promptId} left the ComfyUI queue without a result (was it deleted there?).`,
        );
      }
      await wait();
    }
  }
}

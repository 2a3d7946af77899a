/**
 * The `comfyui` engine: runs the operator's ComfyUI workflow (exported in API format, with placeholders
 * filled from the job: comfyui-request.ts) on a ComfyUI server, on the remote-job base
 * (hosted/remote-job-engine.ts). It uploads the images the workflow uses and queues the prompt (the job, by its
 * prompt id), polls `/history` until the prompt has run (comfyui-job.ts), checking now and then that it is still
 * queued, downloads the video the workflow saved and conforms it to the contract's MP4. ComfyUI's websocket, where it opens, reports the sampling progress and wakes the next
 * poll as soon as the prompt has run.
 */
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { TaskFailure } from '../../domain/errors.js';
import type { UpstreamHandle } from '../../domain/upstream-job.js';
import type { RenderJob } from '../../ports/engine.js';
import { type EngineContext, pollDispatcherOf } from '../engine-context.js';
import type { HostedStatus } from '../hosted/hosted-task.js';
import {
  type JobEvents,
  RemoteJobEngine,
  type RemoteJobSteps,
  type UpstreamCalls,
} from '../hosted/remote-job-engine.js';
import { abortReason, untilAborted } from '../until-aborted.js';
import { ComfyUiClient, type QueuedPrompt } from './comfyui-client.js';
import { type HistoryEntry, historyOutcome, type OutputFile, pickOutputFile } from './comfyui-job.js';
import type { ComfyUiOptions } from './comfyui-options.js';
import { imageIndexFor, jobValues } from './comfyui-request.js';
import { ProgressSocket } from './progress-socket.js';
import { SamplingProgress } from './sampling-progress.js';
import { type Workflow, WorkflowTemplate } from './workflow-template.js';

const DEFAULT_POLL_INTERVAL_MS = 1_000;
const SOCKET_OPEN_TIMEOUT_MS = 10_000;
/** After an abort, how long a `POST /prompt` already sent may still answer (its answer names what to cancel). */
const QUEUE_GRACE_MS = 5_000;
/** Every this many polls that find no history, one also checks that the prompt is still queued. */
const POLLS_PER_QUEUE_CHECK = 5;

/** What a finished prompt gives: its history, and what ComfyUI said of the outputs it dropped. */
interface PromptResult {
  readonly entry: HistoryEntry;
  readonly skippedOutputs: string | undefined;
}

function safeName(text: string): string {
  return text.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 80);
}

export class ComfyUiEngine extends RemoteJobEngine<PromptResult> {
  readonly #workflowPath: string;
  readonly #template: WorkflowTemplate;
  readonly #outputNode: string | undefined;
  readonly #pollIntervalMs: number;
  readonly #apiKey: string | undefined;
  readonly #client: ComfyUiClient;

  constructor(name: string, options: ComfyUiOptions, context: EngineContext) {
    super('comfyui', name, context);
    this.#workflowPath = resolve(context.baseDir, options.workflow);
    this.#template = this.#loadWorkflow();
    if (options.output_node !== undefined && !this.#template.hasNode(options.output_node)) {
      throw new Error(
        `${this.label}: output_node "${options.output_node}" is not a node of the workflow ${this.#workflowPath}.`,
      );
    }
    this.#outputNode = options.output_node;
    this.#pollIntervalMs = options.poll_interval_ms ?? DEFAULT_POLL_INTERVAL_MS;
    this.#apiKey = options.api_key;
    this.#client = new ComfyUiClient({
      baseUrl: options.base_url,
      label: this.label,
      apiKey: options.api_key,
      dispatcher: context.dispatcher,
      pollDispatcher: pollDispatcherOf(context),
    });
  }

  protected get secret(): string | undefined {
    return this.#apiKey;
  }

  protected get pollIntervalMs(): number {
    return this.#pollIntervalMs;
  }

  protected cancelUpstream(job: UpstreamHandle): Promise<void> {
    return this.#client.cancel(job.id);
  }

  /** The server answers `/system_stats`, and the workflow file is still there and still valid. */
  protected async checkUpstream(signal: AbortSignal): Promise<void> {
    this.#loadWorkflow();
    await this.#client.systemStats(signal);
  }

  #loadWorkflow(): WorkflowTemplate {
    try {
      return WorkflowTemplate.load(this.#workflowPath);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(`${this.label}: ${reason}`, { cause: error });
    }
  }

  /** The prompt's id is the job; its client id (whose websocket hears its progress) and dropped outputs ride along. */
  protected steps(job: RenderJob, calls: UpstreamCalls): RemoteJobSteps<PromptResult> {
    let polls = 0;
    /** The websocket opened for the prompt this render queued. */
    let opened: ProgressSocket | undefined;
    return {
      // The images are matched here, not before: a resumed job is never submitted, and its run has no pictures.
      submit: async () => {
        const values = jobValues(job);
        for (const [placeholder, name] of await this.#uploadImages(job, this.#imageIndexes(job), calls)) {
          values.set(placeholder, name);
        }
        const clientId = randomUUID();
        // Opened before the prompt is queued, so that no message about it is missed.
        opened = await this.#openSocket(clientId, calls.signal);
        let queued: QueuedPrompt;
        try {
          queued = await this.#queue(this.#template.fill(values), clientId, calls);
        } catch (error) {
          opened?.close();
          throw error;
        }
        const data: Record<string, string> = { client_id: clientId };
        if (queued.skippedOutputs !== undefined) data.skipped_outputs = queued.skippedOutputs;
        return { id: queued.promptId, data };
      },
      poll: async (handle) => {
        polls += 1;
        const status = await this.#status(handle, calls);
        if (status.state !== 'queued' || polls % POLLS_PER_QUEUE_CHECK !== 0) return status;
        if (await this.#client.isQueued(handle.id, calls)) return status;
        // It may have finished between the two calls.
        const last = await this.#status(handle, calls);
        if (last.state !== 'queued') return last;
        return {
          state: 'failed',
          failure: {
            refused: false,
            message: `prompt ${handle.id} left the ComfyUI queue without a result (was it deleted there?).`,
          },
        };
      },
      download: (result, path) => this.#client.download(this.#outputFile(result), path, calls),
      watch: (handle, events) => this.#watch(handle, events, calls.signal, opened),
    };
  }

  /** The prompt's history: run (its outputs), failed (its error), or not there yet (queued or running). */
  async #status(handle: UpstreamHandle, calls: UpstreamCalls): Promise<HostedStatus<PromptResult>> {
    const entry = await this.#client.history(handle.id, calls);
    if (!entry || historyOutcome(entry, this.label) !== 'done') return { state: 'queued' };
    return { state: 'succeeded', result: { entry, skippedOutputs: handle.data?.skipped_outputs } };
  }

  /** The websocket of client `clientId`; undefined when the server has none or it will not open. */
  async #openSocket(clientId: string, signal: AbortSignal): Promise<ProgressSocket | undefined> {
    try {
      return await ProgressSocket.open(this.#client.socketUrl(clientId), {
        headers: this.#client.headers(),
        dispatcher: this.#client.dispatcher,
        signal,
        timeoutMs: SOCKET_OPEN_TIMEOUT_MS,
        label: this.label,
      });
    } catch {
      if (signal.aborted) throw abortReason(signal);
      return undefined;
    }
  }

  /**
   * Follows the prompt over the websocket of its client id (the one opened for its queueing, or, for a resumed
   * prompt, a new one): each sampling step is progress, and the prompt's end or failure wakes the poll that
   * reads its history. A socket that will not open or is lost leaves it to the polls.
   */
  #watch(
    handle: UpstreamHandle,
    events: JobEvents,
    signal: AbortSignal,
    opened: ProgressSocket | undefined,
  ): () => void {
    const clientId = handle.data?.client_id;
    const stop = new AbortController();
    const watching = AbortSignal.any([signal, stop.signal]);
    let socket = opened;
    const progress = new SamplingProgress(this.#template.samplerNodes(), 1);
    const following = async (): Promise<void> => {
      socket ??= clientId === undefined ? undefined : await this.#openSocket(clientId, watching);
      if (!socket) return;
      if (watching.aborted) return socket.close();
      await socket.finished(
        handle.id,
        (node, value, max) => {
          const fraction = progress.update(node, value, max);
          if (fraction !== undefined) events.progress(fraction);
        },
        watching,
      );
      events.wake();
    };
    // A failure the socket reports wakes the poll, which reads it from the history.
    following().catch((error: unknown) => {
      if (error instanceof TaskFailure) events.wake();
    });
    return () => {
      stop.abort();
      socket?.close();
    };
  }

  /** The video to fetch; when there is none, what ComfyUI said of the outputs it dropped is the likely reason. */
  #outputFile({ entry, skippedOutputs }: PromptResult): OutputFile {
    try {
      return pickOutputFile(entry, this.#outputNode, this.label);
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
      if (typeof index === 'string') throw new TaskFailure('invalid_asset', `${this.label}: ${index}.`);
      indexes.set(placeholder, index);
    }
    return indexes;
  }

  /** Uploads each job image the workflow uses, once; resolves with placeholder → the name ComfyUI gave it. */
  async #uploadImages(
    job: RenderJob,
    indexes: ReadonlyMap<string, number>,
    calls: UpstreamCalls,
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
          calls,
        );
        uploaded.set(index, name);
      }
      if (name !== undefined) names.set(placeholder, name);
    }
    return names;
  }

  /**
   * Queues the workflow. An abort does not cut the request off: ComfyUI may already have queued the prompt,
   * and only its answer names the prompt to cancel, which is then cancelled (nobody has the job yet).
   */
  async #queue(workflow: Workflow, clientId: string, calls: UpstreamCalls): Promise<QueuedPrompt> {
    const { signal } = calls;
    const request = new AbortController();
    const stopLater = (): void => {
      setTimeout(() => request.abort(abortReason(signal)), QUEUE_GRACE_MS).unref();
    };
    signal.addEventListener('abort', stopLater, { once: true });
    const queued = this.#client
      .queuePrompt(workflow, clientId, { signal: request.signal, deadline: calls.deadline })
      .then((answer) => {
        if (signal.aborted) void this.#client.cancel(answer.promptId);
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
}

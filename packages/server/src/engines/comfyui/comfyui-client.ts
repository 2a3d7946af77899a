/**
 * ComfyUI's HTTP API, as the comfyui engine uses it: upload an input image, queue a prompt, read its history,
 * download an output, cancel, and the health check. Calls retry through `upstream-request.ts`; the API key
 * goes in the `Authorization` header only.
 */
import { readFile } from 'node:fs/promises';
import { type Dispatcher, FormData, request } from 'undici';
import { TaskFailure } from '../../domain/errors.js';
import { IMAGE_EXTENSIONS, sniffMediaType } from '../../media/media-type.js';
import { CANCEL_TIMEOUT_MS } from '../hosted/hosted-task.js';
import { upstreamCheck } from '../upstream-check.js';
import { fetchUpstreamFile } from '../upstream-file.js';
import {
  excerptOf,
  isTransientStatus,
  type UpstreamCall,
  type UpstreamOptions,
  upstreamJson,
  upstreamRequest,
} from '../upstream-request.js';
import type { HistoryAnswer, HistoryEntry, OutputFile } from './comfyui-job.js';
import type { Workflow } from './workflow-template.js';

export interface CallOptions {
  readonly signal: AbortSignal;
  /** Epoch ms after which no attempt starts. */
  readonly deadline: number;
}

export interface ComfyUiClientOptions {
  readonly baseUrl: string;
  /** Names the engine in messages: `comfyui engine "ltx"`. */
  readonly label: string;
  readonly apiKey?: string;
  readonly dispatcher?: Dispatcher;
  /** For the history and queue reads that follow a prompt, within the engine's request budget. */
  readonly pollDispatcher?: Dispatcher;
}

const PROMPT_ATTEMPT_TIMEOUT_MS = 60_000;
const MESSAGE_CHARS = 1_000;

interface ComfyError {
  readonly type?: unknown;
  readonly message?: unknown;
  readonly details?: unknown;
}

interface NodeErrors {
  readonly errors?: readonly ComfyError[];
  readonly class_type?: unknown;
}

interface PromptRefusal {
  readonly error?: string | ComfyError;
  readonly node_errors?: Readonly<Record<string, NodeErrors>> | readonly unknown[];
}

function describeComfyError(error: ComfyError): string {
  const message = typeof error.message === 'string' ? error.message : String(error.type ?? 'error');
  return typeof error.details === 'string' && error.details !== '' ? `${message}: ${error.details}` : message;
}

function describeNodeErrors(nodeErrors: PromptRefusal['node_errors']): string[] {
  const parts: string[] = [];
  const nodes = nodeErrors && typeof nodeErrors === 'object' && !Array.isArray(nodeErrors) ? nodeErrors : {};
  for (const [id, node] of Object.entries(nodes as Record<string, NodeErrors>)) {
    const classType = typeof node?.class_type === 'string' ? ` (${node.class_type})` : '';
    for (const error of node?.errors ?? [])
      parts.push(`node ${id}${classType}: ${describeComfyError(error)}`);
  }
  return parts;
}

function clip(text: string): string {
  return text.length > MESSAGE_CHARS ? `${text.slice(0, MESSAGE_CHARS)}…` : text;
}

/** ComfyUI's 400 answer to a prompt it will not run: its error and the first problems of its nodes. */
export function describeRefusal(answer: PromptRefusal | null): string | undefined {
  if (answer === null || typeof answer !== 'object' || answer.error === undefined) return undefined;
  const parts = [typeof answer.error === 'string' ? answer.error : describeComfyError(answer.error)];
  parts.push(...describeNodeErrors(answer.node_errors));
  return clip(parts.join('; '));
}

/** A prompt ComfyUI queued. */
export interface QueuedPrompt {
  readonly promptId: string;
  /**
   * The problems of the outputs ComfyUI dropped: it runs a prompt when at least one output passes validation
   * and answers the others' errors in `node_errors` (execution.py validate_prompt).
   */
  readonly skippedOutputs?: string;
}

/** File name extension and MIME type from an image's first bytes (downloaded assets have no extension). */
function imageType(bytes: Buffer): { readonly extension: string; readonly mime: string } {
  const mime = sniffMediaType(bytes, 'image_urls');
  const extension = mime && IMAGE_EXTENSIONS[mime];
  return mime && extension ? { extension: `.${extension}`, mime } : { extension: '.png', mime: 'image/png' };
}

export class ComfyUiClient {
  readonly #base: URL;
  readonly #label: string;
  readonly #apiKey: string | undefined;
  readonly #dispatcher: Dispatcher | undefined;
  readonly #pollDispatcher: Dispatcher | undefined;

  constructor(options: ComfyUiClientOptions) {
    // A trailing slash keeps a path prefix (`https://proxy/comfy`) when endpoints are resolved against it.
    this.#base = new URL(options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`);
    this.#label = options.label;
    this.#apiKey = options.apiKey;
    this.#dispatcher = options.dispatcher;
    this.#pollDispatcher = options.pollDispatcher ?? options.dispatcher;
  }

  /** `Authorization` when an API key is set, and `content-type` for JSON bodies. */
  headers(json = false): Record<string, string> {
    const headers: Record<string, string> = {};
    if (this.#apiKey) headers.authorization = `Bearer ${this.#apiKey}`;
    if (json) headers['content-type'] = 'application/json';
    return headers;
  }

  get dispatcher(): Dispatcher | undefined {
    return this.#dispatcher;
  }

  url(path: string, query?: Readonly<Record<string, string>>): URL {
    const url = new URL(path, this.#base);
    for (const [key, value] of Object.entries(query ?? {})) url.searchParams.set(key, value);
    return url;
  }

  /** The progress websocket's address for `clientId`. */
  socketUrl(clientId: string): URL {
    const url = this.url('ws', { clientId });
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    return url;
  }

  #options(call: CallOptions, extra: Partial<UpstreamOptions> = {}): UpstreamOptions {
    return {
      label: this.#label,
      signal: call.signal,
      deadline: call.deadline,
      dispatcher: this.#dispatcher,
      ...extra,
    };
  }

  /** Uploads an image into ComfyUI's input folder as `baseName` (plus an extension); resolves with its name there. */
  async uploadImage(path: string, baseName: string, call: CallOptions): Promise<string> {
    const bytes = await readFile(path);
    const { extension, mime } = imageType(bytes);
    const form = new FormData();
    form.append('image', new Blob([bytes], { type: mime }), `${baseName}${extension}`);
    form.append('overwrite', 'true');
    form.append('type', 'input');
    const answer = await upstreamJson<{ name?: unknown; subfolder?: unknown }>(
      { method: 'POST', url: this.url('upload/image'), headers: this.headers(), body: form },
      this.#options(call),
    );
    if (typeof answer.name !== 'string' || answer.name === '') {
      throw new TaskFailure(
        'upstream_error',
        `${this.#label}: POST /upload/image answered without a file name.`,
      );
    }
    return typeof answer.subfolder === 'string' && answer.subfolder !== ''
      ? `${answer.subfolder}/${answer.name}`
      : answer.name;
  }

  /**
   * Queues `workflow`; resolves with its prompt ID (and what ComfyUI said of outputs it dropped). A workflow
   * ComfyUI refuses (HTTP 400 with `node_errors`) is `upstream_error` saying what it found wrong.
   */
  async queuePrompt(workflow: Workflow, clientId: string, call: CallOptions): Promise<QueuedPrompt> {
    const prompt: UpstreamCall = {
      method: 'POST',
      url: this.url('prompt'),
      headers: this.headers(true),
      body: JSON.stringify({ prompt: workflow, client_id: clientId }),
    };
    // The first attempt is made here so a refusal's body can be read whole (upstreamRequest keeps only its
    // start); transient failures are then retried by upstreamRequest's rules.
    let first: Dispatcher.ResponseData | undefined;
    try {
      first = await request(prompt.url, {
        method: prompt.method,
        headers: prompt.headers,
        body: prompt.body,
        signal: call.signal,
        dispatcher: this.#dispatcher,
        headersTimeout: PROMPT_ATTEMPT_TIMEOUT_MS,
        bodyTimeout: PROMPT_ATTEMPT_TIMEOUT_MS,
      });
    } catch {
      if (call.signal.aborted) throw call.signal.reason;
    }
    let answer: { prompt_id?: unknown; node_errors?: PromptRefusal['node_errors'] };
    if (first && first.statusCode < 400) {
      answer = await this.#json(first, '/prompt');
    } else if (first && !isTransientStatus(first.statusCode)) {
      throw this.#refusal(first.statusCode, await first.body.text().catch(() => ''));
    } else {
      await first?.body.dump().catch(() => undefined);
      answer = await upstreamJson(
        prompt,
        this.#options(call, { attemptTimeoutMs: PROMPT_ATTEMPT_TIMEOUT_MS }),
      );
    }
    if (typeof answer.prompt_id !== 'string' || answer.prompt_id === '') {
      throw new TaskFailure('upstream_error', `${this.#label}: POST /prompt answered without a prompt_id.`);
    }
    const skipped = describeNodeErrors(answer.node_errors);
    return {
      promptId: answer.prompt_id,
      ...(skipped.length > 0 ? { skippedOutputs: clip(skipped.join('; ')) } : {}),
    };
  }

  /** What a 4xx answer to `POST /prompt` says: ComfyUI's own account of a 400, else the start of the body. */
  #refusal(status: number, body: string): TaskFailure {
    let refusal: string | undefined;
    try {
      refusal = status === 400 ? describeRefusal(JSON.parse(body) as PromptRefusal) : undefined;
    } catch {
      refusal = undefined;
    }
    if (refusal)
      return new TaskFailure('upstream_error', `${this.#label}: ComfyUI refused the workflow: ${refusal}`);
    const excerpt = excerptOf(body);
    return new TaskFailure(
      'upstream_error',
      `${this.#label}: POST /prompt answered HTTP ${status}${excerpt ? `: ${excerpt}` : ''}`,
    );
  }

  async #json<T>(response: Dispatcher.ResponseData, path: string): Promise<T> {
    const text = await response.body.text();
    try {
      return JSON.parse(text) as T;
    } catch (error) {
      throw new TaskFailure(
        'upstream_error',
        `${this.#label}: POST ${path} answered something that is not JSON.`,
        {
          cause: error,
        },
      );
    }
  }

  /** The prompt's history entry, once it has finished (undefined while it is queued or running). */
  async history(promptId: string, call: CallOptions): Promise<HistoryEntry | undefined> {
    const answer = await upstreamJson<HistoryAnswer>(
      { method: 'GET', url: this.url(`history/${encodeURIComponent(promptId)}`), headers: this.headers() },
      this.#options(call, { dispatcher: this.#pollDispatcher }),
    );
    return answer !== null && typeof answer === 'object' ? answer[promptId] : undefined;
  }

  /**
   * Whether the prompt is running or waiting in the queue. An answer in an unknown shape counts as yes, so a
   * prompt is never given up on by mistake.
   */
  async isQueued(promptId: string, call: CallOptions): Promise<boolean> {
    const answer = await upstreamJson<{ queue_running?: unknown; queue_pending?: unknown }>(
      { method: 'GET', url: this.url('queue'), headers: this.headers() },
      this.#options(call, { dispatcher: this.#pollDispatcher }),
    );
    const lists = [answer?.queue_running, answer?.queue_pending];
    if (!lists.every(Array.isArray)) return true;
    // Each item is [number, prompt_id, prompt, extra_data, outputs_to_execute].
    return (lists as unknown[][]).some((list) =>
      list.some((item) => Array.isArray(item) && item[1] === promptId),
    );
  }

  /** Downloads an output file to `path`. */
  async download(file: OutputFile, path: string, call: CallOptions): Promise<void> {
    const url = this.url('view', { filename: file.filename, subfolder: file.subfolder, type: file.type });
    await fetchUpstreamFile({ method: 'GET', url, headers: this.headers() }, path, this.#options(call));
  }

  /**
   * Best effort: takes the prompt off the queue if it is still waiting, and interrupts it if it is running
   * (servers since 2025 interrupt only the named prompt; older ones whatever runs). Never rejects.
   */
  async cancel(promptId: string): Promise<void> {
    const call = (path: string, body: unknown): Promise<void> =>
      upstreamRequest(
        { method: 'POST', url: this.url(path), headers: this.headers(true), body: JSON.stringify(body) },
        {
          label: this.#label,
          signal: AbortSignal.timeout(CANCEL_TIMEOUT_MS),
          deadline: Date.now() + CANCEL_TIMEOUT_MS,
          dispatcher: this.#dispatcher,
          maxAttempts: 2,
          baseDelayMs: 100,
        },
      ).then(
        (response) => response.body.dump(),
        () => undefined,
      );
    await call('queue', { delete: [promptId] });
    await call('interrupt', { prompt_id: promptId });
  }

  /** One `GET /system_stats` for the engine's check; rejects with what went wrong. */
  async systemStats(signal: AbortSignal): Promise<void> {
    await upstreamCheck({
      call: { method: 'GET', url: this.url('system_stats'), headers: this.headers() },
      what: 'GET /system_stats',
      label: this.#label,
      apiKey: this.#apiKey,
      dispatcher: this.#dispatcher,
      signal,
    });
  }
}

/**
 * fal.ai's queue API (https://docs.fal.ai/model-endpoints/queue, https://fal.ai/docs/api-reference/inference-api;
 * the official client fal-ai/fal-js `libs/client/src/queue.ts`): `POST {base}/{model}` with the model's input as
 * the body answers a `request_id` with its `status_url`, `response_url` and `cancel_url`; `GET {status_url}` says
 * IN_QUEUE, IN_PROGRESS or COMPLETED (there is no failed status: a failed run is COMPLETED too); `GET
 * {response_url}` answers what the model answered, its output or its error; `PUT {cancel_url}` cancels.
 *
 * Those three URLs name only the model's owner and app, not the endpoint's path ("Do not build these URLs
 * yourself"): the ones the queue returns are used, but only under base_url's own origin, so the key is never
 * sent anywhere else; otherwise (an answer without them, a proxy in front) they are built as the official
 * clients build them. One third party saw Seedance's owner/app result URL answer 404 where the full path
 * worked, so a result not found there is asked for under the full path too.
 */
import { randomUUID } from 'node:crypto';
import type { Dispatcher } from 'undici';
import { TaskFailure } from '../../domain/errors.js';
import type { UpstreamHandle } from '../../domain/upstream-job.js';
import { urlUnder } from '../hosted/hosted-options.js';
import { CANCEL_TIMEOUT_MS } from '../hosted/hosted-task.js';
import { upstreamCheck } from '../upstream-check.js';
import {
  excerptOf,
  isTransientStatus,
  UpstreamAnswer,
  type UpstreamCall,
  type UpstreamOptions,
  upstreamJson,
  upstreamRequest,
} from '../upstream-request.js';

/** Endpoint ids under these keep them before owner/app (fal-js `parseEndpointId`). */
const NAMESPACES = ['workflows', 'comfy'];

export interface FalTarget {
  /** Names the engine in messages. */
  readonly label: string;
  readonly baseUrl: string;
  readonly apiKey: string;
  /** The endpoint id: `fal-ai/bytedance/seedance/v1/pro/image-to-video`. */
  readonly model: string;
  readonly dispatcher?: Dispatcher;
  /** For status reads, within the engine's request budget; `dispatcher` when absent. */
  readonly pollDispatcher?: Dispatcher;
  /** Sent as `?fal_webhook=` with each submission: fal POSTs there once the request is done (fal-callback.ts). */
  readonly webhookUrl?: string;
}

/** A submitted request and where to follow it. */
export interface FalRequest {
  readonly id: string;
  readonly statusUrl: URL;
  readonly responseUrl: URL;
  readonly cancelUrl: URL;
  /** The result under the model's full path, asked when `responseUrl` is not found. */
  readonly fullPathResponseUrl: URL;
}

export type FalQueueStatus = 'IN_QUEUE' | 'IN_PROGRESS' | 'COMPLETED';
const STATUSES: readonly string[] = ['IN_QUEUE', 'IN_PROGRESS', 'COMPLETED'];

/** What the model answered at the response URL: its output, or its error answer as it came. */
export type FalAnswer =
  | { readonly ok: true; readonly output: unknown }
  | { readonly ok: false; readonly status: number; readonly body: string };

/** The task's signal and time limit, for the calls made on its behalf. */
export interface FalCallLimits {
  readonly signal: AbortSignal;
  readonly deadline: number;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** fal's request errors (timeouts, runner failures) carry an `error_type`: the request's own final answer. */
function isRequestError(body: string): boolean {
  try {
    const parsed: unknown = JSON.parse(body);
    return isRecord(parsed) && typeof parsed.error_type === 'string';
  } catch {
    return false;
  }
}

export class FalQueue {
  readonly #target: FalTarget;
  /** `owner/app` (with its namespace), the part of the endpoint id the request URLs carry. */
  readonly #app: string;

  constructor(target: FalTarget) {
    this.#target = target;
    const parts = target.model.split('/');
    const kept = NAMESPACES.includes(parts[0] as string) ? 3 : 2;
    this.#app = parts.slice(0, kept).join('/');
  }

  /** `POST {base}/{model}` with the input; resolves with the request and its URLs. */
  async submit(input: Readonly<Record<string, unknown>>, limits: FalCallLimits): Promise<FalRequest> {
    const url = urlUnder(this.#target.baseUrl, this.#target.model);
    if (this.#target.webhookUrl) url.searchParams.set('fal_webhook', this.#target.webhookUrl);
    const call: UpstreamCall = {
      method: 'POST',
      url,
      headers: { ...this.#headers(), 'content-type': 'application/json' },
      body: JSON.stringify(input),
    };
    const answer = await upstreamJson<unknown>(call, this.#options(limits));
    const id = isRecord(answer) ? answer.request_id : undefined;
    if (!isRecord(answer) || typeof id !== 'string' || id === '') {
      throw new TaskFailure(
        'upstream_error',
        `${this.#target.label}: POST /${this.#target.model} answered without a request_id: ${excerptOf(answer)}`,
      );
    }
    const urls: Record<string, string> = {};
    for (const key of ['status_url', 'response_url', 'cancel_url']) {
      const url = answer[key];
      if (typeof url === 'string') urls[key] = url;
    }
    return this.requestOf({ id, data: urls });
  }

  /**
   * The request of a job's handle (or of the queue's answer to the submission): the URLs fal answered, where
   * they are on base_url's origin (fal asks that they not be built), else built there.
   */
  requestOf(job: UpstreamHandle): FalRequest {
    const { id, data } = job;
    return {
      id,
      statusUrl: this.#trusted(data?.status_url, this.#requestUrl(id, '/status')),
      responseUrl: this.#trusted(data?.response_url, this.#requestUrl(id, '')),
      cancelUrl: this.#trusted(data?.cancel_url, this.#requestUrl(id, '/cancel')),
      fullPathResponseUrl: urlUnder(
        this.#target.baseUrl,
        `${this.#target.model}/requests/${encodeURIComponent(id)}`,
      ),
    };
  }

  /** The handle a later run polls and cancels the request from. */
  static handleOf(request: FalRequest): UpstreamHandle {
    return {
      id: request.id,
      data: {
        status_url: request.statusUrl.href,
        response_url: request.responseUrl.href,
        cancel_url: request.cancelUrl.href,
      },
    };
  }

  /** `GET {status_url}`: 202 while queued or in progress, 200 once completed. */
  async status(request: FalRequest, limits: FalCallLimits): Promise<FalQueueStatus> {
    const answer = await upstreamJson<unknown>(
      { method: 'GET', url: request.statusUrl, headers: this.#headers() },
      { ...this.#options(limits), dispatcher: this.#target.pollDispatcher ?? this.#target.dispatcher },
    );
    const status = isRecord(answer) ? answer.status : undefined;
    if (typeof status === 'string' && STATUSES.includes(status)) return status as FalQueueStatus;
    throw new TaskFailure(
      'upstream_error',
      `${this.#target.label}: the queue answered an unknown status for request ${request.id}: ${excerptOf(answer)}`,
    );
  }

  /** `GET {response_url}` of a completed request: the model's output, or the error it answered. */
  async answer(request: FalRequest, limits: FalCallLimits): Promise<FalAnswer> {
    const first = await this.#read(request.responseUrl, limits);
    const notFound = (answer: FalAnswer) => !answer.ok && (answer.status === 404 || answer.status === 405);
    if (!notFound(first) || request.fullPathResponseUrl.href === request.responseUrl.href) return first;
    const second = await this.#read(request.fullPathResponseUrl, limits);
    return notFound(second) ? first : second;
  }

  /** `PUT {cancel_url}`, best effort within its own short time limit; never rejects. */
  async cancel(request: FalRequest): Promise<void> {
    try {
      const response = await upstreamRequest(
        { method: 'PUT', url: request.cancelUrl, headers: this.#headers() },
        {
          label: this.#target.label,
          signal: AbortSignal.timeout(CANCEL_TIMEOUT_MS),
          deadline: Date.now() + CANCEL_TIMEOUT_MS,
          dispatcher: this.#target.dispatcher,
          attemptTimeoutMs: CANCEL_TIMEOUT_MS,
          maxAttempts: 1,
        },
      );
      await response.body.dump();
    } catch {
      // Already completed, gone, or the queue unreachable: the task ends the same either way.
    }
  }

  /**
   * The queue has no free "who am I" call, so this asks the status of a request id nobody made (free, nothing
   * is submitted): 401/403 means the key is refused, 404 that it was taken and no such request exists. That
   * assumes the queue authenticates before it looks the id up, as its 401 on every route suggests; it says
   * nothing of the account's balance (a locked account's 403 comes on submit) or of the model.
   */
  async checkKey(signal: AbortSignal): Promise<void> {
    const url = this.#requestUrl(randomUUID(), '/status');
    await upstreamCheck({
      call: { method: 'GET', url, headers: this.#headers() },
      what: `GET ${url.pathname.replace(/[^/]+\/status$/, '{made-up id}/status')}`,
      label: this.#target.label,
      apiKey: this.#target.apiKey,
      dispatcher: this.#target.dispatcher,
      signal,
      onRefusal: (refusal) => {
        if (refusal.status === 404) return;
        if (refusal.status !== 401 && refusal.status !== 403) throw refusal;
        throw new Error(`${refusal.message} (fal refused the key)`);
      },
    });
  }

  async #read(url: URL, limits: FalCallLimits): Promise<FalAnswer> {
    let text: string;
    try {
      const response = await upstreamRequest(
        { method: 'GET', url, headers: this.#headers() },
        {
          ...this.#options(limits),
          // "If the model returned an error, this operation returns the same error": final, not retried.
          finalAnswer: (status, body) => !isTransientStatus(status) || isRequestError(body),
        },
      );
      text = await response.body.text();
    } catch (error) {
      if (error instanceof UpstreamAnswer) return { ok: false, status: error.status, body: error.body };
      throw error;
    }
    try {
      return { ok: true, output: JSON.parse(text) };
    } catch (error) {
      throw new TaskFailure(
        'upstream_error',
        `${this.#target.label}: GET ${url.pathname} answered something that is not JSON: ${excerptOf(text)}`,
        { cause: error },
      );
    }
  }

  /** A URL the queue returned, if it is on base_url's own origin; otherwise the one built there. */
  #trusted(given: unknown, built: URL): URL {
    if (typeof given !== 'string') return built;
    try {
      const url = new URL(given);
      return url.origin === new URL(this.#target.baseUrl).origin ? url : built;
    } catch {
      return built;
    }
  }

  #requestUrl(id: string, suffix: string): URL {
    return urlUnder(this.#target.baseUrl, `${this.#app}/requests/${encodeURIComponent(id)}${suffix}`);
  }

  #headers(): Record<string, string> {
    return { authorization: `Key ${this.#target.apiKey}`, accept: 'application/json' };
  }

  #options(limits: FalCallLimits): UpstreamOptions {
    return {
      label: this.#target.label,
      signal: limits.signal,
      deadline: limits.deadline,
      dispatcher: this.#target.dispatcher,
    };
  }
}

/**
 * A strict fake of fal.ai's queue API (https://queue.fal.run) and of the models behind it, ByteDance's Seedance
 * v1 pro image-to-video and text-to-video and their `fast` variants, with a media host beside it (fal's CDN).
 * Written from:
 *
 * - [QUEUE] https://docs.fal.ai/model-endpoints/queue and https://fal.ai/docs/api-reference/inference-api: submit
 *   `POST /{model id}` (the full endpoint path), answered with `IN_QUEUE`, `request_id`, `status_url`,
 *   `response_url`, `cancel_url`, `queue_position`; those URLs carry only owner/app ("Do not build these URLs
 *   yourself"); status 202 while IN_QUEUE/IN_PROGRESS, 200 once COMPLETED; no FAILED status: a failed run is
 *   COMPLETED and its error is the result (TanStack/ai PR #396, verified live against fal).
 * - [QUEUE-OPENAPI] https://fal.ai/docs/api-reference/inference-api/openapi/queue.json: the submit body is
 *   `{type: object, additionalProperties: true}`: the queue does not validate the model's input; the model
 *   does, when it runs, so bad input surfaces as the result's error, never at submit.
 * - [CLIENT] fal-ai/fal-js @ 381105e1 `libs/client/src/request.ts` (`Authorization: Key <key>`, JSON),
 *   `queue.ts`, `utils.ts` `parseEndpointId` (owner/app, `workflows/` and `comfy/` keep a third part),
 *   `types/common.ts` (status shapes), `types/endpoints.ts` (`SeedanceImageToVideoInput`,
 *   `SeedanceProTextToVideoInput`, `ModifyOutput`, `File`); fal-ai/fal `fal_client/auth.py` (key = id:secret).
 * - [RESULT] https://fal.ai/docs/inference-api/queue/result: "If the model returned an error, this operation
 *   returns the same error."
 * - [ERRORS] https://docs.fal.ai/errors: model errors 422 `{"detail": [{loc, msg, type, url?, input?}]}`;
 *   `content_policy_violation` ("The content was flagged by a content checker.", with `categories`).
 *   [REQ-ERRORS] https://fal.ai/docs/documentation/model-apis/request-errors: `{"detail", "error_type"}` with
 *   `X-Fal-Error-Type`, e.g. 503 `runner_disconnected`.
 * - [CANCEL] https://fal.ai/docs/inference-api/queue/cancel: `PUT {cancel_url}`; `CANCELLATION_REQUESTED`,
 *   `ALREADY_COMPLETED`, `NOT_FOUND` (the codes 202/400/404 are from older docs and a third party: unverified).
 * - [OBSERVED] third-party captures: 401 `{"detail": "No user found for Key ID and Secret"}` (fal-ai/fal#1068),
 *   `"Invalid Key Authorization header format. Expected '<key_id>:<key_secret>'."`, 403 "User is locked.
 *   Reason: Exhausted balance…", 405 when status is polled under the full model path, and (Seedance v2, one
 *   report) a 404 "Path not found" at the owner/app result URL where the full path worked (`resultAtFullPath`).
 * - [WEBHOOKS] https://docs.fal.ai/model-endpoints/webhooks (and its "Verifying Your Webhook" section): a
 *   submission with `?fal_webhook=<url>` (fal-js `queue.ts`: `query: { fal_webhook: webhookUrl }`) is POSTed to
 *   once done, `{request_id, gateway_request_id, status: "OK" | "ERROR", payload, error?}` ("Invalid status code:
 *   422" for a model's error), retried "10 times in the span of 2 hours" when not delivered; signed with ED25519:
 *   `X-Fal-Webhook-Request-Id`, `-User-Id`, `-Timestamp` (Unix seconds), `-Signature` (hex) over the request id,
 *   user id, timestamp and the hex SHA-256 of the body joined by newlines, under a key of the JWKS at
 *   https://rest.alpha.fal.ai/.well-known/jwks.json (`OKP`/`Ed25519`, `x` base64url), here a third server
 *   (`jwksUrl`) listing the fake's key and another. Its choices: a `fal_webhook` that is not an absolute http(s)
 *   URL refused 422 in pydantic's words, and retries 4 attempts 50 ms apart, doubling.
 *
 * - [V15] fal's OpenAPI document of `fal-ai/bytedance/seedance/v1.5/pro/text-to-video`
 *   (`BytedanceSeedanceV15ProTextToVideoInput`): `prompt`, `aspect_ratio`, `resolution` (default 720p),
 *   `duration` a string enum 4–12 (default "5"), `camera_fixed`, `seed`, `enable_safety_checker`, and
 *   `generate_audio` (boolean, default true): its video then has a soundtrack (a tone here).
 *
 * The models validate like the pydantic apps they are (unknown fields ignored, `duration` a string enum, a
 * number there refused), with pydantic v2's messages. Where no source says, the fake chooses and says so: the
 * wording of some refusals, a result asked before completion (400 "Request is still in progress", one client's
 * not-ready message), the size, frame rate (24) and frame count (duration × 24 + 1) of the video made, and how
 * many polls a request takes (`pollsToFinish`). Every video is a real MP4, made with ffmpeg once per shape.
 */
import { createHash, generateKeyPairSync, type KeyObject, randomUUID, sign } from 'node:crypto';
import { stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { loadImage } from '@napi-rs/canvas';
import { CallbackNetwork, deliverWithRetries, type SentCallback } from './callback-sender.js';
import { LoopbackServer, readBody, sendJson, sendVideoFile } from './fake-http.js';
import { fakeVideoFile } from './fake-video-file.js';

export const SEEDANCE_I2V = 'fal-ai/bytedance/seedance/v1/pro/image-to-video';
export const SEEDANCE_T2V = 'fal-ai/bytedance/seedance/v1/pro/text-to-video';
export const SEEDANCE_FAST_I2V = 'fal-ai/bytedance/seedance/v1/pro/fast/image-to-video';
export const SEEDANCE_FAST_T2V = 'fal-ai/bytedance/seedance/v1/pro/fast/text-to-video';
export const SEEDANCE_15_T2V = 'fal-ai/bytedance/seedance/v1.5/pro/text-to-video';

export type FalOutcome = 'complete' | 'fail' | 'never-finish';
export type FalRoute = 'submit' | 'status' | 'result';

export interface FakeFalOptions {
  /** Where made videos are kept by shape. */
  readonly cacheDir: string;
  /** The account's key, `<key_id>:<key_secret>`. */
  readonly apiKey: string;
}

export interface RecordedSubmit {
  readonly model: string;
  readonly contentType: string | undefined;
  readonly authorization: string | undefined;
  /** The body as received. */
  readonly input: unknown;
  /** The `fal_webhook` query parameter, if any. */
  readonly webhook: string | undefined;
}

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly authorization: string | undefined;
  readonly status: number;
}

type FieldKind = 'string' | 'integer' | 'boolean' | 'url';

interface FieldRule {
  readonly kind: FieldKind;
  readonly required?: boolean;
  readonly literals?: readonly string[];
}

interface ModelSchema {
  readonly fields: Readonly<Record<string, FieldRule>>;
  /** Makes sound unless `generate_audio` is false [V15]. */
  readonly sound?: boolean;
  /** Defaults of the fields that shape the video. */
  readonly defaults: {
    readonly aspect_ratio: string;
    readonly resolution: string;
    readonly duration: string;
  };
}

const RATIOS = ['21:9', '16:9', '4:3', '1:1', '3:4', '9:16'];
const DURATIONS = ['2', '3', '4', '5', '6', '7', '8', '9', '10', '11', '12'];
const RESOLUTIONS = ['480p', '720p', '1080p'];

/** [CLIENT] `SeedanceImageToVideoInput` (fal-js HEAD, 2026-08). */
const SEEDANCE_I2V_SCHEMA: ModelSchema = {
  fields: {
    prompt: { kind: 'string', required: true },
    image_url: { kind: 'url', required: true },
    // "(Deprecated) … this field is accepted for backwards compatibility and ignored."
    end_image_url: { kind: 'url' },
    aspect_ratio: { kind: 'string', literals: [...RATIOS, 'auto'] },
    resolution: { kind: 'string', literals: RESOLUTIONS },
    duration: { kind: 'string', literals: DURATIONS },
    num_frames: { kind: 'integer' },
    camera_fixed: { kind: 'boolean' },
    seed: { kind: 'integer' },
    enable_safety_checker: { kind: 'boolean' },
  },
  defaults: { aspect_ratio: 'auto', resolution: '720p', duration: '5' },
};

/** [CLIENT] `SeedanceProTextToVideoInput`: no image, no `auto` ratio, 1080p by default. */
const SEEDANCE_T2V_SCHEMA: ModelSchema = {
  fields: {
    prompt: { kind: 'string', required: true },
    aspect_ratio: { kind: 'string', literals: RATIOS },
    resolution: { kind: 'string', literals: RESOLUTIONS },
    duration: { kind: 'string', literals: DURATIONS },
    num_frames: { kind: 'integer' },
    camera_fixed: { kind: 'boolean' },
    seed: { kind: 'integer' },
    enable_safety_checker: { kind: 'boolean' },
  },
  defaults: { aspect_ratio: '16:9', resolution: '1080p', duration: '5' },
};

/** [CLIENT] `SeedanceProFastImageToVideoInput`: as image-to-video without `end_image_url`, 1080p by default. */
const SEEDANCE_FAST_I2V_SCHEMA: ModelSchema = {
  fields: Object.fromEntries(
    Object.entries(SEEDANCE_I2V_SCHEMA.fields).filter(([name]) => name !== 'end_image_url'),
  ),
  defaults: { ...SEEDANCE_I2V_SCHEMA.defaults, resolution: '1080p' },
};

/** [V15] Seedance 1.5 pro text-to-video: 4–12 s, sound unless `generate_audio: false`. */
const SEEDANCE_15_T2V_SCHEMA: ModelSchema = {
  fields: {
    prompt: { kind: 'string', required: true },
    aspect_ratio: { kind: 'string', literals: RATIOS },
    resolution: { kind: 'string', literals: RESOLUTIONS },
    duration: { kind: 'string', literals: DURATIONS.slice(2) },
    camera_fixed: { kind: 'boolean' },
    seed: { kind: 'integer' },
    enable_safety_checker: { kind: 'boolean' },
    generate_audio: { kind: 'boolean' },
  },
  sound: true,
  defaults: { aspect_ratio: '16:9', resolution: '720p', duration: '5' },
};

const MODELS: ReadonlyMap<string, ModelSchema> = new Map([
  [SEEDANCE_15_T2V, SEEDANCE_15_T2V_SCHEMA],
  [SEEDANCE_I2V, SEEDANCE_I2V_SCHEMA],
  [SEEDANCE_T2V, SEEDANCE_T2V_SCHEMA],
  [SEEDANCE_FAST_I2V, SEEDANCE_FAST_I2V_SCHEMA],
  // [CLIENT] `BytedanceSeedanceV1ProFastTextToVideoInput = SeedanceProTextToVideoInput`.
  [SEEDANCE_FAST_T2V, SEEDANCE_T2V_SCHEMA],
]);

/** The fake's choice: Seedance's output frame rate is not in the sources. */
const OUTPUT_FPS = 24;
const KEY_FORMAT = /^[^:\s]+:[^:\s]+$/;

interface ValidationItem {
  readonly loc: readonly (string | number)[];
  readonly msg: string;
  readonly type: string;
  readonly input?: unknown;
  readonly ctx?: Record<string, unknown>;
  readonly url?: string;
  readonly categories?: readonly string[];
}

/** What the model answered: its output, or an error with its status (and fal's error-type header). */
interface ModelAnswer {
  readonly status: number;
  readonly body: unknown;
  readonly errorType?: string;
}

interface QueuedRequest {
  readonly id: string;
  readonly model: string;
  readonly app: string;
  readonly input: unknown;
  polls: number;
  state: 'IN_QUEUE' | 'IN_PROGRESS' | 'COMPLETED';
  answer?: ModelAnswer;
  cancelled: boolean;
  /** `fal_webhook`, POSTed to once it completes [WEBHOOKS]. */
  readonly webhook: string | undefined;
}

class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    super(`HTTP ${status}`);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** pydantic v2's literal message: `Input should be '480p', '720p' or '1080p'`. */
function expected(literals: readonly string[]): string {
  const quoted = literals.map((value) => `'${value}'`);
  return quoted.length > 1 ? `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}` : (quoted[0] ?? '');
}

/** [CLIENT] `parseEndpointId`: owner/app, with `workflows/` and `comfy/` ids keeping their namespace. */
function appOf(model: string): string {
  const parts = model.split('/');
  return parts.slice(0, ['workflows', 'comfy'].includes(parts[0] ?? '') ? 3 : 2).join('/');
}

/** The decoded size of a `data:image/…;base64,` URL, or undefined when it is not a readable image. */
async function dataImageSize(url: string): Promise<{ width: number; height: number } | undefined> {
  const match = /^data:(image\/[a-z0-9.+-]+);base64,([A-Za-z0-9+/=]+)$/i.exec(url);
  if (!match) return undefined;
  try {
    const image = await loadImage(Buffer.from(match[2] as string, 'base64'));
    return { width: image.width, height: image.height };
  } catch {
    return undefined;
  }
}

function ratioValue(ratio: string): number {
  const [w, h] = ratio.split(':').map(Number) as [number, number];
  return w / h;
}

function nearestRatio(width: number, height: number): string {
  const target = Math.log(width / height);
  return RATIOS.reduce((best, ratio) =>
    Math.abs(Math.log(ratioValue(ratio)) - target) < Math.abs(Math.log(ratioValue(best)) - target)
      ? ratio
      : best,
  );
}

export class FakeFalServer {
  readonly submits: RecordedSubmit[] = [];
  readonly requests: RecordedRequest[] = [];
  /** Requests of the media host: fal's media URLs need no key, and must not be sent one. */
  readonly mediaRequests: RecordedRequest[] = [];
  /** Request ids `PUT …/cancel` reached, with the status the queue answered. */
  readonly cancels: { readonly id: string; readonly status: string }[] = [];
  outcome: FalOutcome = 'complete';
  /** Status polls a request takes to complete: the first sees IN_QUEUE, then IN_PROGRESS. */
  pollsToFinish = 3;
  /** A prompt containing this is flagged by the content checker. */
  flaggedWord = 'forbidden';
  /** A locked account: submits answer 403 (observed, balance exhausted). */
  locked = false;
  /** The queue returns its URLs on this origin instead of its own (a proxy's view of them). */
  urlOrigin: string | undefined;
  /** The owner/app result URL answers 404 "Path not found" and only the full model path serves it (OBSERVED). */
  resultAtFullPath = false;
  /** Answers to the next calls of a route before it is served, as fal's ingress gives them under load. */
  readonly busyAnswers: { route: FalRoute; status: number; headers?: Record<string, string> }[] = [];
  /** What stands between fal and the gateway its webhooks go to. */
  readonly callbackNetwork = new CallbackNetwork();
  /** Every webhook attempt, as it was answered. */
  readonly webhooks: SentCallback[] = [];
  /** Requests the JWKS server had. */
  jwksRequests = 0;
  /** The account's user id, in `X-Fal-Webhook-User-Id`. */
  readonly userId = `fake-user-${randomUUID().slice(0, 8)}`;
  readonly #signingKey = generateKeyPairSync('ed25519');
  /** Listed in the JWKS beside the signing key, as fal lists several. */
  readonly #otherKey = generateKeyPairSync('ed25519');
  readonly #options: FakeFalOptions;
  readonly #queue: LoopbackServer;
  readonly #media: LoopbackServer;
  readonly #rest: LoopbackServer;
  readonly #requests = new Map<string, QueuedRequest>();
  readonly #files = new Map<string, string>();

  private constructor(options: FakeFalOptions) {
    this.#options = options;
    this.#queue = new LoopbackServer((req, res) => this.#handleQueue(req, res));
    this.#media = new LoopbackServer((req, res) => this.#handleMedia(req, res));
    this.#rest = new LoopbackServer(async (req, res) => {
      const path = new URL(req.url ?? '/', 'http://fake').pathname;
      this.jwksRequests++;
      if (req.method !== 'GET' || path !== '/.well-known/jwks.json') {
        sendJson(res, 404, { detail: 'Not Found' });
        return;
      }
      const keys = [this.#otherKey, this.#signingKey].map(({ publicKey }, index) => ({
        ...(publicKey.export({ format: 'jwk' }) as Record<string, unknown>),
        kid: `fake-${index}`,
      }));
      sendJson(res, 200, { keys });
    });
  }

  static async start(options: FakeFalOptions): Promise<FakeFalServer> {
    const fake = new FakeFalServer(options);
    await Promise.all([fake.#queue.listen(), fake.#media.listen(), fake.#rest.listen()]);
    return fake;
  }

  /** The JWKS of the webhooks' keys (`https://rest.alpha.fal.ai/.well-known/jwks.json`). */
  get jwksUrl(): string {
    return `${this.#rest.url}/.well-known/jwks.json`;
  }

  /**
   * Completes a request now, as the model does in its own time (whatever `pollsToFinish` says), and sends its
   * webhook; resolves with the webhook's last attempt (undefined without one).
   */
  async finish(id: string): Promise<SentCallback | undefined> {
    const request = this.#requests.get(id);
    if (!request) throw new Error(`no request ${id}`);
    if (request.state === 'COMPLETED' || request.cancelled) throw new Error(`request ${id} is over`);
    await this.#complete(request);
    return this.#sendWebhook(request);
  }

  /**
   * Headers signing `body` as fal signs a webhook [WEBHOOKS]: at `at`, with the fake's key unless `key` is given.
   */
  signWebhook(
    requestId: string,
    body: string,
    options: { readonly at?: Date; readonly key?: KeyObject } = {},
  ): Record<string, string> {
    const timestamp = String(Math.floor((options.at ?? new Date()).getTime() / 1000));
    const digest = createHash('sha256').update(body).digest('hex');
    const message = Buffer.from([requestId, this.userId, timestamp, digest].join('\n'));
    return {
      'x-fal-webhook-request-id': requestId,
      'x-fal-webhook-user-id': this.userId,
      'x-fal-webhook-timestamp': timestamp,
      'x-fal-webhook-signature': sign(null, message, options.key ?? this.#signingKey.privateKey).toString(
        'hex',
      ),
    };
  }

  /** The completed request's answer, POSTed to its `fal_webhook` [WEBHOOKS]. */
  #sendWebhook(request: QueuedRequest): Promise<SentCallback | undefined> {
    const { webhook, answer } = request;
    if (!webhook || !answer) return Promise.resolve(undefined);
    const ok = answer.status === 200;
    const body = JSON.stringify({
      request_id: request.id,
      gateway_request_id: request.id,
      status: ok ? 'OK' : 'ERROR',
      ...(ok ? {} : { error: `Invalid status code: ${answer.status}` }),
      payload: answer.body,
    });
    return deliverWithRetries({
      network: this.callbackNetwork,
      url: webhook,
      body,
      headers: () => this.signWebhook(request.id, body),
      attempts: 4,
      retryDelayMs: 50,
      timeoutMs: 5000,
      sent: this.webhooks,
    });
  }

  async #complete(request: QueuedRequest): Promise<void> {
    request.answer = await this.#runModel(request);
    request.state = 'COMPLETED';
  }

  /** The queue's base URL (`https://queue.fal.run`). */
  get url(): string {
    return this.#queue.url;
  }

  /** The media host's base URL (`https://v3.fal.media`). */
  get mediaUrl(): string {
    return this.#media.url;
  }

  /** Ids of requests still queued or running and not cancelled. */
  get running(): string[] {
    return [...this.#requests.values()]
      .filter((request) => request.state !== 'COMPLETED' && !request.cancelled)
      .map((request) => request.id);
  }

  async close(): Promise<void> {
    for (const server of [this.#queue, this.#media, this.#rest]) await server.close();
  }

  async #handleQueue(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    let status = 200;
    let body: unknown;
    let headers: Record<string, string> = {};
    try {
      const raw = await readBody(req);
      this.#authenticate(req);
      ({ status, body, headers } = await this.#route(req, url, raw));
    } catch (error) {
      if (!(error instanceof Refusal)) {
        status = 500;
        body = { detail: `Internal Server Error: ${String(error)}` };
      } else {
        status = error.status;
        body = error.body;
        headers = error.headers;
      }
    }
    this.requests.push({
      method: req.method ?? '',
      path: url.pathname,
      authorization: req.headers.authorization,
      status,
    });
    sendJson(res, status, body, headers);
  }

  async #handleMedia(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://fake').pathname;
    const file = req.method === 'GET' ? this.#files.get(path) : undefined;
    this.mediaRequests.push({
      method: req.method ?? '',
      path,
      authorization: req.headers.authorization,
      status: file ? 200 : 404,
    });
    if (!file) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('Not Found');
      return;
    }
    await sendVideoFile(res, file);
  }

  /** [CLIENT] `Authorization: Key <key_id>:<key_secret>`; [OBSERVED] the 401 bodies. */
  #authenticate(req: IncomingMessage): void {
    const header = req.headers.authorization ?? '';
    const [scheme, key] = header.split(/ (.*)/s);
    // A missing header or another scheme gets the same answer (the fake's choice: only the malformed key's is observed).
    if (scheme !== 'Key' || key === undefined || !KEY_FORMAT.test(key)) {
      throw new Refusal(401, {
        detail: "Invalid Key Authorization header format. Expected '<key_id>:<key_secret>'.",
      });
    }
    if (key !== this.#options.apiKey)
      throw new Refusal(401, { detail: 'No user found for Key ID and Secret' });
  }

  async #route(
    req: IncomingMessage,
    url: URL,
    raw: Buffer,
  ): Promise<{ status: number; body: unknown; headers: Record<string, string> }> {
    const method = req.method ?? 'GET';
    const path = url.pathname.replace(/^\//, '');
    const model = MODELS.has(path) ? path : undefined;
    if (model) {
      if (method !== 'POST') throw new Refusal(405, { detail: 'Method Not Allowed' });
      this.#busy('submit');
      return { status: 200, body: this.#submit(req, url, model, raw), headers: {} };
    }
    const match = /^(.+)\/requests\/([^/]+)(\/status|\/cancel)?$/.exec(path);
    if (!match) throw new Refusal(404, { detail: 'Not Found' });
    const [, prefix, id, action] = match as unknown as [string, string, string, string | undefined];
    const request = this.#requests.get(id);
    const fullPath = request !== undefined && prefix === request.model && prefix !== request.app;
    if (action === '/status') {
      // [OBSERVED] status polled under the full model path: 405.
      if (fullPath || MODELS.has(prefix)) throw new Refusal(405, { detail: 'Method Not Allowed' });
      if (method !== 'GET') throw new Refusal(405, { detail: 'Method Not Allowed' });
      if (!request || prefix !== request.app) throw new Refusal(404, { detail: 'Request not found' });
      this.#busy('status');
      return this.#status(request, url);
    }
    if (action === '/cancel') {
      if (method !== 'PUT') throw new Refusal(405, { detail: 'Method Not Allowed' });
      if (!request || prefix !== request.app) {
        this.cancels.push({ id, status: 'NOT_FOUND' });
        throw new Refusal(404, { status: 'NOT_FOUND' });
      }
      return this.#cancel(request);
    }
    if (method !== 'GET') throw new Refusal(405, { detail: 'Method Not Allowed' });
    if (!request) throw new Refusal(404, { detail: 'Request not found' });
    const served = this.resultAtFullPath ? fullPath : prefix === request.app;
    if (!served) {
      // The full model path is refused like its status URL (the fake's choice) unless `resultAtFullPath`.
      if (fullPath) throw new Refusal(405, { detail: 'Method Not Allowed' });
      throw new Refusal(404, { detail: this.resultAtFullPath ? 'Path not found' : 'Request not found' });
    }
    this.#busy('result');
    return this.#result(request);
  }

  #busy(route: FalRoute): void {
    const index = this.busyAnswers.findIndex((answer) => answer.route === route);
    if (index < 0) return;
    const [answer] = this.busyAnswers.splice(index, 1);
    if (answer)
      throw new Refusal(answer.status, { detail: 'Service temporarily unavailable' }, answer.headers);
  }

  /** [QUEUE] submit; [QUEUE-OPENAPI] the input is any JSON object, checked only when the model runs. */
  #submit(req: IncomingMessage, url: URL, model: string, raw: Buffer): unknown {
    if (this.locked) {
      throw new Refusal(403, {
        detail: 'User is locked. Reason: Exhausted balance. Top up your balance at fal.ai/dashboard/billing',
      });
    }
    const timeout = req.headers['x-fal-request-timeout'];
    if (timeout !== undefined && !(Number(timeout) > 1)) {
      // The clients refuse this before sending; the server's answer is the fake's.
      throw new Refusal(400, { detail: 'X-Fal-Request-Timeout must be a number greater than 1' });
    }
    let input: unknown;
    const contentType = req.headers['content-type'];
    try {
      input = JSON.parse(raw.toString('utf8'));
    } catch {
      input = undefined;
    }
    const webhook = url.searchParams.get('fal_webhook') ?? undefined;
    this.submits.push({ model, contentType, authorization: req.headers.authorization, input, webhook });
    if (!contentType?.toLowerCase().startsWith('application/json') || !isRecord(input)) {
      throw new Refusal(422, {
        detail: [{ loc: ['body'], msg: 'Input should be a valid dictionary', type: 'dict_type' }],
      });
    }
    if (webhook !== undefined && !/^https?:\/\/[^\s/]+/i.test(webhook)) {
      throw new Refusal(422, {
        detail: [
          {
            loc: ['query', 'fal_webhook'],
            msg: 'Input should be a valid URL, relative URL without a base',
            type: 'url_parsing',
            input: webhook,
          },
        ],
      });
    }
    const id = randomUUID();
    const app = appOf(model);
    this.#requests.set(id, {
      id,
      model,
      app,
      input,
      polls: 0,
      state: 'IN_QUEUE',
      cancelled: false,
      webhook,
    });
    return { status: 'IN_QUEUE', ...this.#urls(app, id), queue_position: 0 };
  }

  #urls(app: string, id: string): Record<string, string> {
    const base = `${this.urlOrigin ?? this.url}/${app}/requests/${id}`;
    return { request_id: id, response_url: base, status_url: `${base}/status`, cancel_url: `${base}/cancel` };
  }

  /** Each poll moves the request on: IN_QUEUE, IN_PROGRESS, then COMPLETED with the model's answer. */
  async #status(
    request: QueuedRequest,
    url: URL,
  ): Promise<{ status: number; body: unknown; headers: Record<string, string> }> {
    if (request.state !== 'COMPLETED' && !request.cancelled) {
      request.polls++;
      if (this.outcome !== 'never-finish' && request.polls >= this.pollsToFinish) {
        await this.#complete(request);
        void this.#sendWebhook(request);
      } else if (request.polls > 1) {
        request.state = 'IN_PROGRESS';
      }
    }
    const logs = ['1', 'true'].includes(url.searchParams.get('logs') ?? '') ? [] : null;
    const base = { status: request.state, ...this.#urls(request.app, request.id) };
    if (request.state === 'IN_QUEUE')
      return { status: 202, body: { ...base, queue_position: 0 }, headers: {} };
    if (request.state === 'IN_PROGRESS') return { status: 202, body: { ...base, logs }, headers: {} };
    return { status: 200, body: { ...base, logs, metrics: { inference_time: 1.5 } }, headers: {} };
  }

  /** [RESULT] the model's own answer, error or output. */
  #result(request: QueuedRequest): { status: number; body: unknown; headers: Record<string, string> } {
    if (request.state !== 'COMPLETED' || !request.answer) {
      throw new Refusal(400, { detail: 'Request is still in progress' });
    }
    const { status, body, errorType } = request.answer;
    return { status, body, headers: errorType ? { 'x-fal-error-type': errorType } : {} };
  }

  /** [CANCEL] a queued or running request is cancelled; a completed one is ALREADY_COMPLETED. */
  #cancel(request: QueuedRequest): { status: number; body: unknown; headers: Record<string, string> } {
    if (request.state === 'COMPLETED') {
      this.cancels.push({ id: request.id, status: 'ALREADY_COMPLETED' });
      throw new Refusal(400, { status: 'ALREADY_COMPLETED' });
    }
    request.cancelled = true;
    this.cancels.push({ id: request.id, status: 'CANCELLATION_REQUESTED' });
    return { status: 202, body: { status: 'CANCELLATION_REQUESTED' }, headers: {} };
  }

  /** The model's run: validate its input as the app would, check the content, then make the video. */
  async #runModel(request: QueuedRequest): Promise<ModelAnswer> {
    const schema = MODELS.get(request.model) as ModelSchema;
    const input = request.input as Record<string, unknown>;
    const problems = await this.#validate(schema, input);
    if (problems.length > 0) return { status: 422, body: { detail: problems } };
    const prompt = input.prompt as string;
    if (input.enable_safety_checker !== false && prompt.toLowerCase().includes(this.flaggedWord)) {
      return {
        status: 422,
        body: {
          detail: [
            {
              loc: ['body', 'prompt'],
              msg: 'The content was flagged by a content checker.',
              type: 'content_policy_violation',
              url: 'https://docs.fal.ai/errors#content_policy_violation',
              input: prompt,
              categories: ['violence'],
            },
          ],
        },
      };
    }
    if (this.outcome === 'fail') {
      return {
        status: 503,
        body: {
          detail: 'The runner disconnected while processing the request.',
          error_type: 'runner_disconnected',
        },
        errorType: 'runner_disconnected',
      };
    }
    const video = await this.#makeVideo(schema, input);
    return {
      status: 200,
      body: {
        video: { url: video.url, content_type: 'video/mp4', file_name: 'output.mp4', file_size: video.size },
        seed: typeof input.seed === 'number' && input.seed >= 0 ? input.seed : 123456,
      },
    };
  }

  /** pydantic v2's errors for the model's input: missing, wrong type, not one of the literals. Extras are ignored. */
  async #validate(schema: ModelSchema, input: Record<string, unknown>): Promise<ValidationItem[]> {
    const problems: ValidationItem[] = [];
    for (const [name, rule] of Object.entries(schema.fields)) {
      const value = input[name];
      const loc = ['body', name];
      if (value === undefined) {
        if (rule.required) problems.push({ loc, msg: 'Field required', type: 'missing', input });
        continue;
      }
      if (rule.literals) {
        if (typeof value !== 'string' || !rule.literals.includes(value)) {
          const ctx = { expected: expected(rule.literals) };
          problems.push({
            loc,
            msg: `Input should be ${ctx.expected}`,
            type: 'literal_error',
            input: value,
            ctx,
          });
        }
      } else if (rule.kind === 'integer' && !Number.isInteger(value)) {
        problems.push({ loc, msg: 'Input should be a valid integer', type: 'int_type', input: value });
      } else if (rule.kind === 'boolean' && typeof value !== 'boolean') {
        problems.push({ loc, msg: 'Input should be a valid boolean', type: 'bool_type', input: value });
      } else if ((rule.kind === 'string' || rule.kind === 'url') && typeof value !== 'string') {
        problems.push({ loc, msg: 'Input should be a valid string', type: 'string_type', input: value });
      } else if (rule.kind === 'url' && name === 'image_url') {
        // http(s) URLs are not fetched here; a data URI must hold a readable image (the wording is the fake's).
        const text = value as string;
        if (!/^https?:\/\//.test(text) && (await dataImageSize(text)) === undefined) {
          problems.push({
            loc,
            msg: 'Failed to load the image. Please ensure the image file is not corrupted and is in a supported format.',
            type: 'image_load_error',
          });
        }
      }
    }
    return problems;
  }

  /** The video the model would make: short side the resolution's lines, long side by the ratio (the fake's choice). */
  async #makeVideo(
    schema: ModelSchema,
    input: Record<string, unknown>,
  ): Promise<{ url: string; size: number }> {
    const resolution = (input.resolution as string | undefined) ?? schema.defaults.resolution;
    let ratio = (input.aspect_ratio as string | undefined) ?? schema.defaults.aspect_ratio;
    if (ratio === 'auto') {
      const image = await dataImageSize(String(input.image_url));
      ratio = image ? nearestRatio(image.width, image.height) : '16:9';
    }
    const lines = Number.parseInt(resolution, 10);
    const value = ratioValue(ratio);
    const long = 2 * Math.round((lines * Math.max(value, 1 / value)) / 2);
    const [width, height] = value >= 1 ? [long, lines] : [lines, long];
    const seconds = Number((input.duration as string | undefined) ?? schema.defaults.duration);
    const frames = typeof input.num_frames === 'number' ? input.num_frames : seconds * OUTPUT_FPS + 1;
    const path = await fakeVideoFile(this.#options.cacheDir, {
      width,
      height,
      fps: OUTPUT_FPS,
      frames,
      picture: { colour: '0xb0702f' },
      ...(schema.sound &&
        input.generate_audio !== false && {
          tone: { frequency: 523, sampleRate: 44_100, channels: 2 as const },
        }),
    });
    const name = `/files/${randomUUID()}/output.mp4`;
    this.#files.set(name, path);
    return { url: `${this.mediaUrl}${name}`, size: (await stat(path)).size };
  }
}

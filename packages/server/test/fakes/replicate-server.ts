/**
 * A strict fake of Replicate's HTTP API (https://replicate.com/docs/reference/http) for the `replicate` engine,
 * written from these sources (keys as cited beside each rule):
 *
 * - [BETA] replicate/replicate-python-beta @ 48e138a15eeb44be36d871ad822b5e86d3852db3 (generated from
 *   Replicate's OpenAPI): `types/prediction.py` (the prediction object), `types/models/prediction_create_params.py`
 *   (the create body), `resources/models/predictions.py`, `resources/predictions.py` (`version` forms),
 *   `resources/account.py`, `types/account_get_response.py`.
 * - [PY] replicate/replicate-python @ 0110c2c5639763a44e73d69011eaec28a15334f7: `client.py` (Bearer auth,
 *   `Prefer: wait`), `exceptions.py` (problem details), `prediction.py` (`Progress.parse`: tqdm lines in logs).
 * - [JS] replicate/replicate-javascript @ 2fd6f3944f5e252f2eb7cd4e9e5416786b9c4861: `index.d.ts` (statuses,
 *   `aborted`), `lib/util.js`, `lib/stream.js` (output files fetched without the key).
 * - [LIFECYCLE] https://replicate.com/docs/topics/predictions/lifecycle (statuses, canceled vs aborted, output
 *   on replicate.delivery); [CREATE] https://replicate.com/docs/topics/predictions/create-a-prediction;
 *   [RATE] https://replicate.com/docs/topics/predictions/rate-limits (the 429 body);
 *   [VALIDATION] https://replicate.com/changelog/2024-05-01-improved-validation-for-api-prediction-payloads
 *   (unknown top-level keys refused); [COG-2943] https://github.com/replicate/cog/pull/2943 and
 *   [ISSUE-26] https://github.com/replicate/replicate-python/issues/26 (input validated at create against the
 *   model's schema; unknown keys inside `input` ignored, as Cog does).
 * - [OBSERVED] third-party captures of real answers: the 401 body, the 404 body, the 422 bodies
 *   (`Input validation failed` with `invalid_fields`, `Invalid version or not permitted`), the E005
 *   moderation failure, and the input schema of `bytedance/seedance-1-pro` (required `prompt`; `image` and
 *   `last_frame_image` nullable URIs; `duration` integer 3–12; `resolution` 480p/720p/1080p; `aspect_ratio`
 *   seven values, "ignored if an image is used"; `fps` only 24; `camera_fixed` boolean; `seed` nullable integer).
 * - [SD2] the input schema of `bytedance/seedance-2.0-fast` as its API page lists it
 *   (replicate.com/bytedance/seedance-2.0-fast/versions/90388a62…/api): `prompt`, `image`, `last_frame_image`,
 *   `duration` -1–15 (default 5), `resolution` (default 720p), `aspect_ratio` (default 16:9, also `adaptive`),
 *   `generate_audio` boolean (default true: "synchronized audio … dialogue, sound effects, and background
 *   music"), `seed` integer; its reference lists (`reference_images`, `reference_videos`, `reference_audios`)
 *   are not modelled (ignored, as undeclared keys are). Its sizes are taken as Seedance 1.0's (fake's choice).
 * - [SEEDANCE] the frame sizes Seedance 1.0 makes per resolution and ratio, and its 24 fps × seconds + 1 frames
 *   (BytePlus ModelArk's Seedance documentation; 9:21 is not in its table: the fake mirrors 21:9).
 * - [WEBHOOKS] https://replicate.com/docs/topics/webhooks/setup-webhook, …/receive-webhook, …/verify-webhook and
 *   https://replicate.com/docs/reference/http (`webhook`: "An HTTPS URL …"; `webhook_events_filter`: `start`,
 *   `output`, `logs`, `completed`, by default new outputs and the end; `webhooks.default.secret.get` answering
 *   `{"key": "whsec_…"}`), as mirrored by guinness77/replicate-docs @ 0efb2e1d; the retries of the final webhook
 *   on a 4xx or 5xx answer ("several times on an exponential backoff", intermediate ones never) from the receive
 *   page as quoted by profdl/picabiaBolt2. Each delivery is the prediction object, signed as Standard Webhooks
 *   prescribe (`webhook-id`, the same on a retry; `webhook-timestamp`; `webhook-signature` `v1,<base64>`).
 *
 * Where the sources are silent the fake chooses, and says so with "(fake's choice)": the status code of a
 * body that is not JSON or of the wrong type, how many polls a prediction takes (`pollsToFinish`), its logs,
 * the text of a model failure and of a 5xx, and the shape of a video made from an `http(s)` image it does not
 * fetch, and, for webhooks [WEBHOOKS], the secret (one per fake), retries 50 ms apart doubling (four attempts),
 * `logs` sent at each poll's new line without the real 500 ms throttle, and the prediction object keeping its
 * data: URL inputs (the real one no longer returns them). Output files live on a second server standing in for
 * replicate.delivery, which serves them with or without a key and records which it got. Not modelled:
 * `Prefer: wait` holding the request, `Cancel-After` deadlines, data removal after an hour, the Files API.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { loadImage } from '@napi-rs/canvas';
import { Webhook } from 'standardwebhooks';
import { CallbackNetwork, deliverWithRetries, type SentCallback } from './callback-sender.js';
import { LoopbackServer, readBody, sendJson, sendVideoFile } from './fake-http.js';
import { fakeVideoFile } from './fake-video-file.js';

type Json = Record<string, unknown>;

/** One property of a model's input schema, as far as the models faked here use JSON Schema. */
interface InputProperty {
  readonly type: 'string' | 'integer' | 'boolean';
  readonly enum?: readonly (string | number)[];
  readonly minimum?: number;
  readonly maximum?: number;
  readonly format?: 'uri';
  readonly nullable?: boolean;
  readonly default?: string | number | boolean;
}

interface ModelSchema {
  readonly required: readonly string[];
  readonly properties: Readonly<Record<string, InputProperty>>;
}

/** [OBSERVED] `bytedance/seedance-1-pro`'s input schema. */
const SEEDANCE_1_PRO: ModelSchema = {
  required: ['prompt'],
  properties: {
    prompt: { type: 'string' },
    image: { type: 'string', format: 'uri', nullable: true },
    last_frame_image: { type: 'string', format: 'uri', nullable: true },
    duration: { type: 'integer', minimum: 3, maximum: 12, default: 5 },
    resolution: { type: 'string', enum: ['480p', '720p', '1080p'], default: '720p' },
    aspect_ratio: {
      type: 'string',
      enum: ['16:9', '4:3', '1:1', '3:4', '9:16', '21:9', '9:21'],
      default: '16:9',
    },
    fps: { type: 'integer', enum: [24], default: 24 },
    camera_fixed: { type: 'boolean', default: false },
    seed: { type: 'integer', nullable: true },
  },
};

/** A version id of it, for `POST /v1/predictions` with `version` (fake's choice: any 64 hex digits would do). */
export const SEEDANCE_VERSION = createHash('sha256').update('bytedance/seedance-1-pro').digest('hex');

/** [SD2] `bytedance/seedance-2.0-fast`'s input schema, as far as modelled. */
const SEEDANCE_2_FAST: ModelSchema = {
  required: ['prompt'],
  properties: {
    prompt: { type: 'string' },
    image: { type: 'string', format: 'uri', nullable: true },
    last_frame_image: { type: 'string', format: 'uri', nullable: true },
    duration: { type: 'integer', minimum: -1, maximum: 15, default: 5 },
    resolution: { type: 'string', enum: ['480p', '720p'], default: '720p' },
    aspect_ratio: {
      type: 'string',
      enum: ['16:9', '4:3', '1:1', '3:4', '9:16', '21:9', 'adaptive'],
      default: '16:9',
    },
    generate_audio: { type: 'boolean', default: true },
    seed: { type: 'integer', nullable: true },
  },
};

const MODELS: ReadonlyMap<string, { readonly schema: ModelSchema; readonly version: string }> = new Map([
  ['bytedance/seedance-1-pro', { schema: SEEDANCE_1_PRO, version: SEEDANCE_VERSION }],
  [
    'bytedance/seedance-2.0-fast',
    {
      schema: SEEDANCE_2_FAST,
      version: createHash('sha256').update('bytedance/seedance-2.0-fast').digest('hex'),
    },
  ],
]);

/** [SEEDANCE] width × height per resolution and ratio (9:21 mirrors 21:9, fake's choice). */
const SEEDANCE_SIZES: Readonly<Record<string, Readonly<Record<string, readonly [number, number]>>>> = {
  '480p': {
    '16:9': [864, 480],
    '4:3': [736, 544],
    '1:1': [640, 640],
    '3:4': [544, 736],
    '9:16': [480, 864],
    '21:9': [960, 416],
    '9:21': [416, 960],
  },
  '720p': {
    '16:9': [1248, 704],
    '4:3': [1120, 832],
    '1:1': [960, 960],
    '3:4': [832, 1120],
    '9:16': [704, 1248],
    '21:9': [1504, 640],
    '9:21': [640, 1504],
  },
  '1080p': {
    '16:9': [1920, 1088],
    '4:3': [1664, 1248],
    '1:1': [1440, 1440],
    '3:4': [1248, 1664],
    '9:16': [1088, 1920],
    '21:9': [2176, 928],
    '9:21': [928, 2176],
  },
};

/** [VALIDATION], [BETA] `prediction_create_params.py`: the only top-level keys of a create. */
const CREATE_KEYS = ['input', 'webhook', 'webhook_events_filter', 'stream'];
const WEBHOOK_EVENTS = ['start', 'output', 'logs', 'completed'];

/** [OBSERVED] content moderation's failure. */
export const SENSITIVE_ERROR =
  'The input or output was flagged as sensitive. Please try again with different inputs. (E005)';
/** A prompt containing this is flagged by the fake's moderation. */
export const FLAGGED_WORD = 'forbidden-content';
/** A model failure's text (fake's choice; E1001 is "out of memory" in Replicate's error codes). */
export const MODEL_FAILURE = 'CUDA out of memory. (E1001)';

const NOT_FOUND = { detail: 'The requested resource could not be found.', status: 404 };
const UNAUTHENTICATED = {
  title: 'Unauthenticated',
  detail: 'You did not pass a valid authentication token',
  status: 401,
};
const THROTTLED = { detail: 'Request was throttled. Your rate limit resets in ~30s.' };

class Answer extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(`HTTP ${status}`);
  }
}

interface FieldProblem {
  readonly type: string;
  readonly field: string;
  readonly description: string;
}

/** [OBSERVED] 422 `Input validation failed`: one `- field: description` line per problem in `detail`. */
function validationFailed(problems: readonly FieldProblem[]): Answer {
  const detail = problems
    .map((problem) => `- ${problem.field === '' ? '' : `${problem.field}: `}${problem.description}\n`)
    .join('');
  return new Answer(422, {
    detail,
    status: 422,
    title: 'Input validation failed',
    invalid_fields: problems,
  });
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** [ISSUE-26], [COG-2943]: `input` against the model's schema; keys it does not declare are ignored. */
function inputProblems(input: Json, schema: ModelSchema): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const name of schema.required) {
    if (!(name in input))
      problems.push({ type: 'required', field: 'input', description: `${name} is required` });
  }
  for (const [name, property] of Object.entries(schema.properties)) {
    if (!(name in input)) continue;
    const value = input[name];
    const field = `input.${name}`;
    if (value === null && property.nullable) continue;
    const given = jsonType(value);
    if (given !== property.type) {
      const description = `Invalid type. Expected: ${property.type}, given: ${given}`;
      problems.push({ type: 'invalid_type', field, description });
      continue;
    }
    if (property.enum && !property.enum.includes(value as string | number)) {
      const allowed = property.enum.map((item) => JSON.stringify(item)).join(', ');
      problems.push({
        type: 'enum',
        field,
        description: `${field} must be one of the following: ${allowed}`,
      });
    }
    if (property.minimum !== undefined && (value as number) < property.minimum) {
      problems.push({
        type: 'number_gte',
        field,
        description: `Must be greater than or equal to ${property.minimum}`,
      });
    }
    if (property.maximum !== undefined && (value as number) > property.maximum) {
      problems.push({
        type: 'number_lte',
        field,
        description: `Must be less than or equal to ${property.maximum}`,
      });
    }
    if (property.format === 'uri' && !/^[A-Za-z][A-Za-z0-9+.-]*:\S+$/.test(value as string)) {
      problems.push({ type: 'format', field, description: "Does not match format 'uri'" });
    }
  }
  return problems;
}

/** The size of the image in a `data:` URL, or undefined when it is not one (or not an image). */
async function dataUrlImageSize(url: string): Promise<{ width: number; height: number } | undefined> {
  const match = /^data:([^;,]*)(;base64)?,(.*)$/s.exec(url);
  if (!match?.[2]) return undefined;
  try {
    const image = await loadImage(Buffer.from(match[3] as string, 'base64'));
    return { width: image.width, height: image.height };
  } catch {
    return undefined;
  }
}

function nearestRatio(width: number, height: number, ratios: readonly string[]): string {
  const distance = (ratio: string) => {
    const [w, h] = ratio.split(':').map(Number) as [number, number];
    return Math.abs(Math.log(w / h) - Math.log(width / height));
  };
  return ratios.reduce((best, ratio) => (distance(ratio) < distance(best) ? ratio : best));
}

/** A Replicate-style prediction id: 26 lowercase base32 characters. */
function predictionId(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  return [...randomBytes(26)].map((byte) => alphabet[byte % 32]).join('');
}

export type FakeOutcome = 'succeed' | 'fail' | 'never-finish';
export type FakeRoute = 'account' | 'create' | 'poll' | 'cancel' | 'secret';

export interface RecordedRequest {
  readonly route: FakeRoute | 'other';
  readonly method: string;
  readonly path: string;
  readonly authorization: string | undefined;
  readonly contentType: string | undefined;
  readonly prefer: string | undefined;
  readonly status: number;
  /** When it arrived (epoch ms). */
  readonly at: number;
}

export interface RecordedCreate {
  readonly path: string;
  readonly body: Json;
}

/** An answer given to the next call of `route` instead of handling it, as a rate limiter or gateway would. */
export interface Interruption {
  readonly route: FakeRoute;
  readonly status: number;
  /** `Retry-After`, for a 429. */
  readonly retryAfter?: string;
  /** For a create: the prediction is made before the error is answered (a gateway timing out after the API). */
  readonly afterCreating?: boolean;
}

interface Video {
  readonly width: number;
  readonly height: number;
  readonly frames: number;
  readonly fps: number;
  /** A soundtrack, as a model that makes sound adds one [SD2]. */
  readonly sound: boolean;
}

interface FakePrediction {
  readonly object: Json;
  /** What the model makes of the input, or why it cannot. */
  readonly video: Video | { readonly failure: string };
  readonly flagged: boolean;
  polls: number;
  /** Where its events go, and which [WEBHOOKS]. */
  readonly webhook: string | undefined;
  readonly events: readonly string[];
}

/** [WEBHOOKS] "By default, … whenever there are new outputs or the prediction has finished." */
const DEFAULT_EVENTS = ['output', 'completed'];

export interface FakeReplicateOptions {
  readonly apiKey: string;
  /** Where made videos are kept by shape, to copy for the next video of the same shape. */
  readonly cacheDir: string;
}

export class FakeReplicate {
  readonly requests: RecordedRequest[] = [];
  readonly creates: RecordedCreate[] = [];
  /** Ids of predictions cancelled while they were running. */
  readonly cancelled: string[] = [];
  /** Downloads from the delivery host, with the Authorization header each carried. */
  readonly downloads: { readonly path: string; readonly authorization: string | undefined }[] = [];
  readonly interruptions: Interruption[] = [];
  outcome: FakeOutcome = 'succeed';
  /** Polls a prediction takes to end (fake's choice). */
  pollsToFinish = 4;
  /** Output as a list: a poster image first, then the video (some models return lists [LIFECYCLE]). */
  outputAsList = false;
  /** `urls.get` on another host than the API's (no real Replicate does this; the engine must not follow it). */
  foreignGetUrls = false;
  /** The account's webhook signing secret [WEBHOOKS]. */
  readonly webhookSecret = `whsec_${randomBytes(24).toString('base64')}`;
  /** What stands between Replicate and the gateway its webhooks go to. */
  readonly callbackNetwork = new CallbackNetwork();
  /** Every webhook attempt, as it was answered. */
  readonly webhooks: SentCallback[] = [];
  readonly #options: FakeReplicateOptions;
  readonly #api: LoopbackServer;
  readonly #delivery: LoopbackServer;
  readonly #predictions = new Map<string, FakePrediction>();
  readonly #files = new Map<string, string>();

  private constructor(options: FakeReplicateOptions) {
    this.#options = options;
    this.#api = new LoopbackServer((req, res) => this.#handle(req, res));
    this.#delivery = new LoopbackServer((req, res) => this.#deliver(req, res));
  }

  static async start(options: FakeReplicateOptions): Promise<FakeReplicate> {
    const fake = new FakeReplicate(options);
    await Promise.all([fake.#api.listen(), fake.#delivery.listen()]);
    return fake;
  }

  /** The API's base URL (`https://api.replicate.com` in reality). */
  get url(): string {
    return this.#api.url;
  }

  /** The stand-in for replicate.delivery. */
  get deliveryUrl(): string {
    return this.#delivery.url;
  }

  /** Ids of predictions neither ended nor cancelled. */
  get running(): string[] {
    return [...this.#predictions.values()]
      .filter((prediction) => ['starting', 'processing'].includes(String(prediction.object.status)))
      .map((prediction) => String(prediction.object.id));
  }

  prediction(id: string): Json | undefined {
    return this.#predictions.get(id)?.object;
  }

  /**
   * Ends a prediction now, as the model does in its own time (whatever `pollsToFinish` says), and sends its
   * webhooks; resolves with the `completed` one's last attempt (undefined without a webhook).
   */
  async finish(id: string): Promise<SentCallback | undefined> {
    const prediction = this.#predictions.get(id);
    if (!prediction) throw new Error(`no prediction ${id}`);
    if (!['starting', 'processing'].includes(String(prediction.object.status))) {
      throw new Error(`prediction ${id} is ${String(prediction.object.status)} already`);
    }
    await this.#end(prediction);
    return this.#endWebhooks(prediction);
  }

  /** Headers signing `body` as a webhook is signed [WEBHOOKS]: with `secret` (the account's), at `at`. */
  signWebhook(
    body: string,
    options: { readonly secret?: string; readonly at?: Date; readonly id?: string } = {},
  ): Record<string, string> {
    const id = options.id ?? `msg_${randomBytes(12).toString('base64url')}`;
    const at = options.at ?? new Date();
    return {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(options.secret ?? this.webhookSecret).sign(id, at, body),
    };
  }

  /** The prediction to its webhook for `event`, if asked for; the final one retried while unanswered. */
  #sendWebhook(prediction: FakePrediction, event: string): Promise<SentCallback | undefined> {
    const { webhook } = prediction;
    if (!webhook || !prediction.events.includes(event)) return Promise.resolve(undefined);
    const body = JSON.stringify(prediction.object);
    const id = `msg_${randomBytes(12).toString('base64url')}`;
    return deliverWithRetries({
      network: this.callbackNetwork,
      url: webhook,
      body,
      headers: () => this.signWebhook(body, { id }),
      attempts: event === 'completed' ? 4 : 1,
      retryDelayMs: 50,
      timeoutMs: 5000,
      sent: this.webhooks,
    });
  }

  async close(): Promise<void> {
    for (const server of [this.#api, this.#delivery]) await server.close();
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const at = Date.now();
    const path = new URL(req.url ?? '/', 'http://fake').pathname;
    const method = req.method ?? '';
    const route = routeOf(method, path);
    let status = 200;
    let body: unknown;
    let headers: Readonly<Record<string, string>> = {};
    try {
      const raw = await readBody(req);
      this.#authenticate(req);
      const interruption = route === 'other' ? undefined : this.#interruption(route);
      if (interruption && !interruption.afterCreating) throw interruptionAnswer(interruption);
      ({ status, body } = await this.#route(req, method, path, raw));
      if (interruption) throw interruptionAnswer(interruption);
    } catch (error) {
      if (!(error instanceof Answer)) {
        status = 500;
        body = { detail: `fake error: ${String(error)}`, status: 500 };
      } else {
        ({ status, body, headers } = error);
      }
    }
    this.requests.push({
      route,
      method,
      path,
      authorization: req.headers.authorization,
      contentType: req.headers['content-type'],
      prefer: typeof req.headers.prefer === 'string' ? req.headers.prefer : undefined,
      status,
      at,
    });
    // [PY] exceptions.py: errors are problem details.
    const type = status >= 400 ? 'application/problem+json' : 'application/json';
    sendJson(res, status, body, { 'content-type': type, ...headers });
  }

  #interruption(route: FakeRoute): Interruption | undefined {
    const index = this.interruptions.findIndex((interruption) => interruption.route === route);
    return index === -1 ? undefined : this.interruptions.splice(index, 1)[0];
  }

  /** [PY] client.py: `Authorization: Bearer <token>`; the legacy `Token <token>` is taken too. */
  #authenticate(req: IncomingMessage): void {
    const match = /^(Bearer|Token) (.+)$/.exec(req.headers.authorization ?? '');
    if (match?.[2] !== this.#options.apiKey) throw new Answer(401, UNAUTHENTICATED);
  }

  async #route(
    req: IncomingMessage,
    method: string,
    path: string,
    raw: Buffer,
  ): Promise<{ status: number; body: unknown }> {
    const origin = `http://${req.headers.host}`;
    if (path === '/v1/account') {
      allow(method, 'GET');
      // [BETA] account_get_response.py.
      return { status: 200, body: { type: 'user', username: 'videogen-test', name: 'Videogen Test' } };
    }
    const official = /^\/v1\/models\/([^/]+)\/([^/]+)\/predictions$/.exec(path);
    if (official || path === '/v1/predictions') {
      allow(method, 'POST');
      return this.#create(req, path, raw, origin, official ? `${official[1]}/${official[2]}` : undefined);
    }
    if (path === '/v1/webhooks/default/secret') {
      allow(method, 'GET');
      return { status: 200, body: { key: this.webhookSecret } };
    }
    const cancel = /^\/v1\/predictions\/([^/]+)\/cancel$/.exec(path);
    if (cancel) {
      allow(method, 'POST');
      return { status: 200, body: this.#cancel(cancel[1] as string) };
    }
    const get = /^\/v1\/predictions\/([^/]+)$/.exec(path);
    if (get) {
      allow(method, 'GET');
      return { status: 200, body: await this.#poll(get[1] as string) };
    }
    throw new Answer(404, NOT_FOUND);
  }

  /**
   * `POST /v1/models/{owner}/{name}/predictions` (official models) and `POST /v1/predictions` with `version`
   * (`owner/name:id`, or the id alone [BETA] predictions.py): 201 with the prediction `starting` [CREATE].
   */
  async #create(
    req: IncomingMessage,
    path: string,
    raw: Buffer,
    origin: string,
    officialModel: string | undefined,
  ): Promise<{ status: number; body: unknown }> {
    const contentType = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
    if (contentType !== 'application/json') {
      // Fake's choice: the API's framework answer to another media type.
      throw new Answer(415, { detail: `Unsupported media type "${contentType}" in request.`, status: 415 });
    }
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch (error) {
      throw new Answer(400, { detail: `JSON parse error - ${String(error)}`, status: 400 });
    }
    if (jsonType(body) !== 'object') {
      throw validationFailed([
        {
          type: 'invalid_type',
          field: '',
          description: `Invalid type. Expected: object, given: ${jsonType(body)}`,
        },
      ]);
    }
    const create = body as Json;
    this.creates.push({ path, body: create });
    const prefer = req.headers.prefer;
    // [CREATE]: `Prefer: wait` or `wait=1..60`; anything else refused (fake's choice of 422).
    if (prefer !== undefined && !/^wait(=([1-9]|[1-5][0-9]|60))?$/.test(String(prefer).trim())) {
      throw validationFailed([
        { type: 'invalid_header', field: '', description: `Invalid Prefer header: ${String(prefer)}` },
      ]);
    }
    const allowed = officialModel === undefined ? [...CREATE_KEYS, 'version'] : CREATE_KEYS;
    const problems: FieldProblem[] = [];
    if (officialModel === undefined && !('version' in create)) {
      problems.push({ type: 'required', field: '', description: 'version is required' });
    }
    if (!('input' in create))
      problems.push({ type: 'required', field: '', description: 'input is required' });
    for (const key of Object.keys(create)) {
      if (!allowed.includes(key)) {
        problems.push({
          type: 'additional_property_not_allowed',
          field: '',
          description: `Additional property ${key} is not allowed`,
        });
      }
    }
    if ('input' in create && jsonType(create.input) !== 'object') {
      const description = `Invalid type. Expected: object, given: ${jsonType(create.input)}`;
      problems.push({ type: 'invalid_type', field: 'input', description });
    }
    const webhook = create.webhook;
    if (webhook !== undefined && (typeof webhook !== 'string' || !/^https:\/\/\S+$/.test(webhook))) {
      problems.push({ type: 'format', field: 'webhook', description: 'webhook must be an HTTPS URL' });
    }
    const events = create.webhook_events_filter;
    if (
      events !== undefined &&
      (!Array.isArray(events) || events.some((event) => !WEBHOOK_EVENTS.includes(event as string)))
    ) {
      const description = `webhook_events_filter must contain only ${WEBHOOK_EVENTS.join(', ')}`;
      problems.push({ type: 'enum', field: 'webhook_events_filter', description });
    }
    if (problems.length > 0) throw validationFailed(problems);

    let model: string;
    let version = 'hidden';
    if (officialModel !== undefined) {
      if (!MODELS.has(officialModel)) throw new Answer(404, NOT_FOUND);
      model = officialModel;
    } else {
      const named = String(create.version);
      const found = [...MODELS].find(
        ([name, known]) => named === known.version || named === `${name}:${known.version}` || named === name,
      );
      if (!found) {
        throw new Answer(422, {
          title: 'Invalid version or not permitted',
          detail: "The specified version does not exist (or perhaps you don't have permission to use it?)",
          status: 422,
        });
      }
      model = found[0];
      version = found[1].version;
    }
    const { schema } = MODELS.get(model) as { schema: ModelSchema };
    const input = create.input as Json;
    const inputErrors = inputProblems(input, schema);
    if (inputErrors.length > 0) throw validationFailed(inputErrors);

    const id = predictionId();
    const getOrigin = this.foreignGetUrls ? this.deliveryUrl : origin;
    const object: Json = {
      id,
      model,
      version,
      input,
      logs: '',
      output: null,
      error: null,
      status: 'starting',
      data_removed: false,
      source: 'api',
      created_at: new Date().toISOString(),
      urls: {
        get: `${getOrigin}/v1/predictions/${id}`,
        cancel: `${origin}/v1/predictions/${id}/cancel`,
        web: `https://replicate.com/p/${id}`,
      },
      ...(typeof webhook === 'string' && { webhook, webhook_events_filter: events ?? DEFAULT_EVENTS }),
    };
    const prompt = String(input.prompt);
    this.#predictions.set(id, {
      object,
      video: await seedanceVideo(input, schema),
      flagged: prompt.includes(FLAGGED_WORD),
      polls: 0,
      webhook: typeof webhook === 'string' ? webhook : undefined,
      events: (events as string[] | undefined) ?? DEFAULT_EVENTS,
    });
    return { status: 201, body: object };
  }

  /** Each poll moves a prediction on: `processing` with a tqdm bar in its logs, then its end [LIFECYCLE]. */
  async #poll(id: string): Promise<Json> {
    const prediction = this.#predictions.get(id);
    if (!prediction) throw new Answer(404, NOT_FOUND);
    const object = prediction.object;
    if (!['starting', 'processing'].includes(String(object.status))) return object;
    prediction.polls++;
    if (prediction.polls === 1) {
      this.#start(prediction);
      void this.#sendWebhook(prediction, 'start');
    }
    const steps = this.pollsToFinish;
    if (Number.isFinite(steps)) {
      const step = Math.min(prediction.polls, steps);
      const percent = Math.floor((100 * step) / steps);
      const bar = '█'.repeat(Math.floor(step * (10 / steps))).padEnd(10, ' ');
      // [PY] prediction.py Progress.parse reads the last line of this form.
      object.logs = `${String(object.logs)}${percent}%|${bar}| ${step}/${steps} [00:0${step}<00:00, 1.00it/s]\n`;
      void this.#sendWebhook(prediction, 'logs');
    }
    if (this.outcome === 'never-finish' || prediction.polls < steps) return object;
    await this.#end(prediction);
    void this.#endWebhooks(prediction);
    return object;
  }

  /** `starting` → `processing`, its logs begun. */
  #start(prediction: FakePrediction): void {
    const { object } = prediction;
    const seed = object.input && (object.input as Json).seed;
    object.status = 'processing';
    object.started_at = new Date().toISOString();
    object.logs = `Using seed: ${String(seed ?? 'random')}\n`;
  }

  /** The webhooks of a prediction that ended (`output` when it has one, then `completed`). */
  async #endWebhooks(prediction: FakePrediction): Promise<SentCallback | undefined> {
    if (prediction.object.status === 'succeeded') await this.#sendWebhook(prediction, 'output');
    return this.#sendWebhook(prediction, 'completed');
  }

  /** The prediction's end: its status, output or error. */
  async #end(prediction: FakePrediction): Promise<void> {
    const { object } = prediction;
    if (object.status === 'starting') this.#start(prediction);
    const end = { completed_at: new Date().toISOString(), metrics: { predict_time: 1.5, total_time: 2 } };
    if (prediction.flagged) {
      Object.assign(object, { status: 'failed', error: SENSITIVE_ERROR, ...end });
    } else if (this.outcome === 'fail') {
      Object.assign(object, { status: 'failed', error: MODEL_FAILURE, ...end });
    } else if ('failure' in prediction.video) {
      Object.assign(object, { status: 'failed', error: prediction.video.failure, ...end });
    } else {
      const file = await this.#makeVideo(prediction.video);
      const token = `xezq/${randomUUID()}`;
      this.#files.set(`/${token}/output.mp4`, file);
      const video = `${this.deliveryUrl}/${token}/output.mp4`;
      const output = this.outputAsList ? [`${this.deliveryUrl}/${token}/poster.webp`, video] : video;
      Object.assign(object, { status: 'succeeded', output, ...end });
    }
  }

  /** [BETA] cancel() → the prediction `canceled`; a prediction already ended is returned as it is. */
  #cancel(id: string): Json {
    const prediction = this.#predictions.get(id);
    if (!prediction) throw new Answer(404, NOT_FOUND);
    const object = prediction.object;
    if (['starting', 'processing'].includes(String(object.status))) {
      object.status = 'canceled';
      object.completed_at = new Date().toISOString();
      this.cancelled.push(id);
      void this.#sendWebhook(prediction, 'completed');
    }
    return object;
  }

  /** replicate.delivery: the file, with or without a key [LIFECYCLE], [JS] stream.js. */
  async #deliver(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://fake').pathname;
    // `urls.get` pointed here (`foreignGetUrls`): answered, so that following it would be seen to work.
    if (/^\/v1\/predictions\/[^/]+$/.test(path)) {
      this.requests.push({
        route: 'poll',
        method: req.method ?? '',
        path: `delivery:${path}`,
        authorization: req.headers.authorization,
        contentType: undefined,
        prefer: undefined,
        status: 200,
        at: Date.now(),
      });
      const prediction = this.#predictions.get(path.split('/').at(-1) as string);
      sendJson(res, prediction ? 200 : 404, prediction?.object ?? NOT_FOUND);
      return;
    }
    this.downloads.push({ path, authorization: req.headers.authorization });
    const file = req.method === 'GET' ? this.#files.get(path) : undefined;
    if (!file) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('Not Found');
      return;
    }
    await sendVideoFile(res, file);
  }

  /** An MP4 of the shape (a flat colour: no test looks at the picture), made once per shape. */
  #makeVideo({ width, height, frames, fps, sound }: Video): Promise<string> {
    return fakeVideoFile(this.#options.cacheDir, {
      width,
      height,
      fps,
      frames,
      picture: { colour: '0x3a7d44' },
      ...(sound && { tone: { frequency: 330, sampleRate: 44_100, channels: 2 as const } }),
    });
  }
}

function routeOf(method: string, path: string): FakeRoute | 'other' {
  if (path === '/v1/account') return 'account';
  if (path === '/v1/webhooks/default/secret') return 'secret';
  if (path === '/v1/predictions' || /^\/v1\/models\/[^/]+\/[^/]+\/predictions$/.test(path)) return 'create';
  if (/^\/v1\/predictions\/[^/]+\/cancel$/.test(path)) return 'cancel';
  if (/^\/v1\/predictions\/[^/]+$/.test(path) && method === 'GET') return 'poll';
  return 'other';
}

function allow(method: string, expected: string): void {
  // Fake's choice: the framework's answer to another method.
  if (method !== expected) throw new Answer(405, { detail: `Method "${method}" not allowed.`, status: 405 });
}

function interruptionAnswer(interruption: Interruption): Answer {
  if (interruption.status === 429) {
    // [RATE]: the throttled body, with `Retry-After` [PY] client.py.
    const headers: Record<string, string> =
      interruption.retryAfter === undefined ? {} : { 'retry-after': interruption.retryAfter };
    return new Answer(429, THROTTLED, headers);
  }
  // Fake's choice: a gateway's problem body.
  return new Answer(interruption.status, {
    title: 'Service Unavailable',
    detail: 'The server is temporarily unable to handle the request.',
    status: interruption.status,
  });
}

/**
 * What Seedance 1.0 makes of a validated input [SEEDANCE]: the resolution's size for the aspect ratio, or for an
 * image the ratio nearest the image ("aspect_ratio … ignored if an image is used"); 24 fps × seconds + 1 frames.
 * An image that is not a decodable data: URL image fails the prediction; an http(s) image is not fetched, the
 * aspect ratio is used (fake's choice).
 */
async function seedanceVideo(input: Json, model: ModelSchema): Promise<Video | { readonly failure: string }> {
  const schema = model.properties;
  const resolution = String(input.resolution ?? schema.resolution?.default);
  const ratios = ((schema.aspect_ratio?.enum ?? []) as string[]).filter((r) => r !== 'adaptive');
  let ratio = String(input.aspect_ratio ?? schema.aspect_ratio?.default);
  const duration = Number(input.duration ?? schema.duration?.default);
  const fps = Number(input.fps ?? schema.fps?.default ?? 24);
  const sound = schema.generate_audio !== undefined && input.generate_audio !== false;
  for (const field of ['image', 'last_frame_image']) {
    const url = input[field];
    if (typeof url !== 'string' || /^https?:/.test(url)) continue;
    const size = await dataUrlImageSize(url);
    if (!size)
      return { failure: `Prediction failed: ${field} could not be read as an image (fake's choice)` };
    if (field === 'image') ratio = nearestRatio(size.width, size.height, ratios);
  }
  const size = SEEDANCE_SIZES[resolution]?.[ratio === 'adaptive' ? '16:9' : ratio];
  if (!size) throw new Error(`no Seedance size for ${resolution} ${ratio}`);
  const [width, height] = size;
  return { width, height, fps, frames: duration * fps + 1, sound };
}

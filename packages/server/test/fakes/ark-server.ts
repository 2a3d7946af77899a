/**
 * A strict fake of Ark's video-generation API (BytePlus ModelArk, Volcengine Ark: Seedance), written from:
 *
 *   [S1] volcengine/volcengine-python-sdk @ b5be43b5e6b3 (5.0.42): volcenginesdkarkruntime resources/
 *        content_generation/tasks.py (the four routes), types/content_generation/* (task object, content item
 *        types), _base_client.py (Authorization: Bearer, JSON, the `{"error": {...}}` envelope), _constants.py.
 *   [S2] byteplus-sdk/byteplus-python-sdk-v2 @ 88f68a35b83c: the same for BytePlus (BASE_URL ap-southeast).
 *   [S3] Volcengine's docs (volcengine.com/docs/82379: 1520757 create, 1521309 retrieve, list, cancel/delete,
 *        1299023 error codes, Base URL and authentication), as mirrored by Hajimi-Commune/VolcanoArkDocs
 *        @ 98e1d9a7.
 *   [S4] BytePlus "Create a video generation task" (docs.byteplus.com/en/docs/ModelArk/1520757, Seedance 2.5
 *        edition): fields, per-model values, roles, media limits.
 *   [S5] BytePlus's 1.5-era pages (Base URL & auth, create, retrieve, list, cancel/delete and its status table).
 *   [S17] Volcengine's create page (volcengine.com/docs/82379/1520757, 2025-09-17 edition, as mirrored by
 *        bolecodex/volcano-ai-workshop/docs/video.md), `callback_url`: "when the status of the video generation task
 *        changes, Ark pushes a POST request to this address; the callback's body has the same structure as the
 *        query task API's answer; its status is queued, running, succeeded or failed (succeeded and failed are
 *        sent three times more when no success is received within 5 seconds)". Nothing says it is signed.
 *   [S18] The create page's `return_last_frame` (Volcengine 1520757, as mirrored by Hajimi-Commune/VolcanoArkDocs,
 *        `docs/API 参考/视频生成 API/创建视频生成任务 API.md`): boolean, default false; true returns the video's last
 *        frame, a PNG of the video's width and height without watermark, which the retrieve API gives as
 *        `content.last_frame_url` (valid 24 h, like the video's link).
 *   [S19] `tools` for web search: no page of Ark's own was readable here. A relay's mirror of the Seedance 2.0
 *        create page (13108701256.mintlify.app, api-reference/model-api/bytedance/seedance-2-0): "tools: the tools
 *        for the model to use; currently supports web search (text-to-video only)"; a public Seedance 2.0 CLI for
 *        Ark (`seedance.py`, "Seedance 2.0 视频生成 CLI（火山方舟 Ark API）") sends `tools: [{"type": "web_search"}]`,
 *        the shape Ark's image and Responses APIs use. ASSUMED from these: `tools` is an array of
 *        `{"type": "web_search"}` (no other type, no other key), taken by the 2.x models in text-to-video only.
 *   [S20] `asset://<id>`: the ids of Ark's asset library (virtual portraits and other trusted images, videos and
 *        audio, made active through the asset APIs) go where a URL goes, in `image_url`, `video_url` and
 *        `audio_url` (relays' pages: docs.toapis.com seedance-2 generation, docs.anyfast.ai volc-asset,
 *        docs.apiyi.com seedance2 asset-library; ids like `asset-20260224200602-qn7wr`).
 *   [live] Captures of the real API by third parties: S7 (validation, roles, "reference_video must be provided
 *        as a web url", unknown fields ignored), S8 (per-model probes, the 409 on DELETE of a running task),
 *        S9 (the exact 401 body), S11 (a real create / running / succeeded exchange), S12 (the exact
 *        "role must be specified for image contents" body), S14 (moderation refusals), S16 (DELETE → `{}`).
 *
 * Each rule below names its source. What it refuses: a missing or wrong `Authorization: Bearer` key on every
 * route (401 AuthenticationError [S3, S9]); a body that is not JSON; a missing `model` or `content`
 * (MissingParameter [S3]); an unknown model (404 InvalidEndpointOrModel.NotFound [S3]) or one the key has not
 * activated (404 ModelNotOpen [S3, S8]); content items of an unknown type or shape, image roles that are
 * missing, unknown, repeated or mixed with reference media, inputs a model does not take, too many references,
 * inline videos, audio alone on 2.0 [S4, S7, S12]; `resolution`, `ratio`, `duration`, `frames`, `seed`,
 * `service_tier`, `execution_expires_after`, `priority`, `draft` values the model does not take, and wrong
 * types [S4, S7, S8]; images outside 300–6000 px a side, 0.4–2.5 in shape or 30 MB, audio that is not WAV or
 * MP3 [S4]; moderated text (400 InputTextSensitiveContentDetected [S3, S14]); more queued tasks than the
 * account may have (429 QuotaExceeded [S3, S6]); DELETE of a running task (409
 * InvalidAction.RunningTaskDeletion [S8, S16]). What it ignores, as the real API does: unknown top-level
 * fields (recorded in `ignoredFields` so tests can see the engine sends none) [S7], `seed`, `watermark` and
 * `camera_fixed` on 2.x (accepted, `seed` echoed) [S4, S7], `X-Client-Request-Id` and other headers. Also
 * refused: `tools` that are not `[{"type": "web_search"}]`, or given outside text-to-video or to a 1.x model
 * [S19, assumed]; an `asset://` URL without an id [S20]. With `return_last_frame: true` a succeeded task has
 * `content.last_frame_url`, a PNG of the video's size (its last frame: the video's flat colour) at a signed link
 * [S18].
 *
 * A task is `queued`, then `running`, then `succeeded` (or `failed`, `expired`); running answers are sparse
 * (`id`, `model`, `status`, `created_at`, `updated_at` [S11]); there is no progress field [S1, S3]. The video
 * is a real MP4 (H.264, 24 fps, 24 × duration + 1 frames [S8], the pixel size of the create page's table for
 * the model's series [S4]) with a mono AAC track when `generate_audio` is on [S4], made once per shape, served
 * at a signed link on another path as TOS serves it [S3, S7].
 *
 * Callbacks [S17]: with `callback_url`, each change of a task's status after its creation (to `running`, then its
 * end) is POSTed there as the task object, unsigned, through `callbackNetwork` (callback-sender.ts), and a final
 * one is sent up to three more times while it is not answered 2xx within 5 s. The fake's choices: a
 * `callback_url` that is not an absolute http(s) URL is refused like other invalid parameters, the creation
 * itself (`queued`) is not called back, and retries come 50 ms apart, doubling.
 *
 * The fake's own choices, where the sources are silent: the code of an unknown task id (404 NotFound.Task,
 * after the official `NotFound.{{Parameter}}` pattern), of DELETE on a cancelled task (409
 * InvalidAction.CancelledTaskDeletion), the wording of the image and audio limit refusals, a `Retry-After`
 * header only on scripted busy answers (Ark documents none), a failed task's code for `outcome: 'fail'`
 * (InternalServiceError), that `content-type` must be `application/json` (what both SDKs send), that the
 * signed video link refuses a request that also carries an `Authorization` header (as S3-style presigned
 * links do), and the ratio `adaptive` resolves to without an image (16:9).
 */
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { createCanvas, loadImage } from '@napi-rs/canvas';
import { CallbackNetwork, deliverWithRetries, type SentCallback } from './callback-sender.js';
import { LoopbackServer, readBody, sendFile, sendJson } from './fake-http.js';
import { fakeVideoFile } from './fake-video-file.js';

export type FakeArkOutcome = 'succeed' | 'fail' | 'refuse-output' | 'expire' | 'never-finish';
export type ArkMode = 't2v' | 'i2v' | 'flf2v' | 'r2v';
export type ArkTaskStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled' | 'expired';

export interface FakeArkOptions {
  readonly apiKey: string;
  /** Where made videos are kept by shape. */
  readonly cacheDir: string;
  /** Model ids this key has not activated: creating with one is 404 ModelNotOpen [S3, S8]. */
  readonly notActivated?: readonly string[];
  /** Queued tasks an account may have; Ark's is 120 [S6]. */
  readonly queueLimit?: number;
}

export interface RecordedArkCreate {
  readonly id: string;
  readonly body: Readonly<Record<string, unknown>>;
  readonly mode: ArkMode;
  /** Top-level fields Ark does not know, which it ignores [S7]. */
  readonly ignoredFields: readonly string[];
}

export interface RecordedArkRequest {
  readonly method: string;
  readonly path: string;
  readonly search: string;
  readonly authorization: string | undefined;
  readonly status: number;
  /** The error code answered, if any. */
  readonly code?: string;
  /** When it was answered (epoch ms). */
  readonly at: number;
}

export interface ScriptedAnswer {
  readonly status: number;
  readonly code: string;
  readonly headers?: Readonly<Record<string, string>>;
}

type Series = '1.0' | '1.5' | '2.0' | '2.5';

interface ModelRules {
  readonly name: string;
  readonly series: Series;
  readonly resolutions: readonly string[];
  readonly defaultResolution: string;
  readonly minDuration: number;
  readonly maxDuration: number;
  /** `duration: -1`, the model chooses [S4]. */
  readonly autoDuration: boolean;
  /** 1.0 refuses `adaptive` in t2v [S4, S3]. */
  readonly adaptiveT2v: boolean;
  /** 2.5 takes only `adaptive` with first (and last) frames [S4, live S7]. */
  readonly framesAdaptiveOnly: boolean;
  readonly lastFrame: boolean;
  readonly referenceImages: number;
  readonly referenceVideos: number;
  readonly referenceAudios: number;
  /** 2.0 refuses audio references without an image or video [S4]. */
  readonly audioAlone: boolean;
  /** `frames` (1.0 only [S4]). */
  readonly frames: boolean;
  /** Makes sound when `generate_audio` (default true) [S4]. */
  readonly audio: boolean;
  /** `service_tier: flex` (not on 2.x [S4]). */
  readonly flex: boolean;
  /** `draft` (1.5 pro only [S4]). */
  readonly draft: boolean;
  /** `output_format` (2.5 only [S4]; ignored elsewhere [S7]). */
  readonly outputFormat: boolean;
  /** `tools: [{"type": "web_search"}]` in t2v (2.x [S19, assumed]). */
  readonly webSearch: boolean;
}

const ALL = ['480p', '720p', '1080p'];
const BASE_1_0 = {
  series: '1.0' as const,
  resolutions: ALL,
  defaultResolution: '1080p',
  minDuration: 2,
  maxDuration: 12,
  autoDuration: false,
  adaptiveT2v: false,
  framesAdaptiveOnly: false,
  referenceImages: 0,
  referenceVideos: 0,
  referenceAudios: 0,
  audioAlone: false,
  frames: true,
  audio: false,
  flex: true,
  draft: false,
  outputFormat: false,
  webSearch: false,
};
const BASE_2_0 = {
  series: '2.0' as const,
  defaultResolution: '720p',
  minDuration: 4,
  maxDuration: 15,
  autoDuration: true,
  adaptiveT2v: true,
  framesAdaptiveOnly: false,
  lastFrame: true,
  referenceImages: 9,
  referenceVideos: 3,
  referenceAudios: 3,
  audioAlone: false,
  frames: false,
  audio: true,
  flex: false,
  draft: false,
  outputFormat: false,
  webSearch: true,
};

/** Per model [S4 per-model table; live S8 probes]; both vendors' ids [S4, S3]. */
const FAMILIES: Readonly<Record<string, ModelRules>> = {
  'seedance-1-0-pro-250528': { ...BASE_1_0, name: 'seedance-1-0-pro', lastFrame: true },
  'seedance-1-0-pro-fast-251015': { ...BASE_1_0, name: 'seedance-1-0-pro-fast', lastFrame: false },
  'seedance-1-5-pro-251215': {
    ...BASE_1_0,
    name: 'seedance-1-5-pro',
    series: '1.5',
    defaultResolution: '720p',
    minDuration: 4,
    autoDuration: true,
    adaptiveT2v: true,
    lastFrame: true,
    frames: false,
    audio: true,
    draft: true,
  },
  'dreamina-seedance-2-0-260128': {
    ...BASE_2_0,
    name: 'dreamina-seedance-2-0',
    resolutions: [...ALL, '4k'],
  },
  'dreamina-seedance-2-0-fast-260128': {
    ...BASE_2_0,
    name: 'dreamina-seedance-2-0-fast',
    resolutions: ['480p', '720p'],
  },
  'dreamina-seedance-2-0-mini-260615': {
    ...BASE_2_0,
    name: 'dreamina-seedance-2-0-mini',
    resolutions: ['480p', '720p'],
  },
  'dreamina-seedance-2-5-260628': {
    ...BASE_2_0,
    name: 'dreamina-seedance-2-5',
    series: '2.5',
    resolutions: ['480p', '720p'],
    maxDuration: 30,
    framesAdaptiveOnly: true,
    referenceImages: 30,
    referenceVideos: 10,
    referenceAudios: 10,
    audioAlone: true,
    outputFormat: true,
  },
};

const MODELS: ReadonlyMap<string, ModelRules> = new Map(
  Object.entries(FAMILIES).flatMap(([id, rules]) => [
    [id, rules],
    [`doubao-${id.replace(/^dreamina-/, '')}`, rules],
  ]),
);

const RATIOS = ['16:9', '4:3', '1:1', '3:4', '9:16', '21:9'];
/** Pixel sizes by series, resolution and ratio [S4 table; the 1.0 column also S3, S5]. */
const SIZES: Readonly<Record<Series, Readonly<Record<string, Readonly<Record<string, string>>>>>> = {
  '1.0': {
    '480p': {
      '16:9': '864x480',
      '4:3': '736x544',
      '1:1': '640x640',
      '3:4': '544x736',
      '9:16': '480x864',
      '21:9': '960x416',
    },
    '720p': {
      '16:9': '1248x704',
      '4:3': '1120x832',
      '1:1': '960x960',
      '3:4': '832x1120',
      '9:16': '704x1248',
      '21:9': '1504x640',
    },
    '1080p': {
      '16:9': '1920x1088',
      '4:3': '1664x1248',
      '1:1': '1440x1440',
      '3:4': '1248x1664',
      '9:16': '1088x1920',
      '21:9': '2176x928',
    },
  },
  '1.5': {},
  '2.0': {
    '480p': {
      '16:9': '864x496',
      '4:3': '752x560',
      '1:1': '640x640',
      '3:4': '560x752',
      '9:16': '496x864',
      '21:9': '992x432',
    },
    '720p': {
      '16:9': '1280x720',
      '4:3': '1112x834',
      '1:1': '960x960',
      '3:4': '834x1112',
      '9:16': '720x1280',
      '21:9': '1470x630',
    },
    '1080p': {
      '16:9': '1920x1080',
      '4:3': '1664x1248',
      '1:1': '1440x1440',
      '3:4': '1248x1664',
      '9:16': '1080x1920',
      '21:9': '2206x946',
    },
    '4k': {
      '16:9': '3840x2160',
      '4:3': '3326x2494',
      '1:1': '2880x2880',
      '3:4': '2494x3326',
      '9:16': '2160x3840',
      '21:9': '4398x1886',
    },
  },
  '2.5': {},
};
// 1.5 pro has the 2.0 series' sizes [S4]; 2.5 differs at 480p 16:9 and 9:16 only [S4].
const SIZES_BY_SERIES: Readonly<Record<Series, Readonly<Record<string, Readonly<Record<string, string>>>>>> =
  {
    ...SIZES,
    '1.5': SIZES['2.0'],
    '2.5': {
      ...SIZES['2.0'],
      '480p': { ...SIZES['2.0']['480p'], '16:9': '854x480', '9:16': '480x854' },
    },
  };

/** The colour of every video the fake makes, and so of its last frame. */
const LAST_FRAME_COLOUR = '7d3a6e';
const CONTENT_TYPES = ['text', 'image_url', 'video_url', 'audio_url', 'draft_task'];
const IMAGE_ROLES = ['first_frame', 'last_frame', 'reference_image'];
const IMAGE_FORMATS = ['jpeg', 'png', 'webp', 'bmp', 'tiff', 'gif', 'heic', 'heif'];
const SEED_MAX = 4_294_967_295;
const FPS = 24;
/** Fields of the create request [S1 create() signature; S4]. */
const KNOWN_FIELDS = new Set([
  'model',
  'content',
  'callback_url',
  'return_last_frame',
  'service_tier',
  'execution_expires_after',
  'generate_audio',
  'draft',
  'safety_identifier',
  'priority',
  'resolution',
  'ratio',
  'duration',
  'frames',
  'seed',
  'camera_fixed',
  'watermark',
  'tools',
]);
const HTTP_TYPES: Readonly<Record<number, string>> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  409: 'Conflict',
  429: 'TooManyRequests',
  500: 'InternalServerError',
};

class ArkRefusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly param = '',
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(`${status} ${code}: ${detail}`);
  }
}

function invalid(detail: string, param = ''): ArkRefusal {
  return new ArkRefusal(400, 'InvalidParameter', detail, param);
}

function invalidValue(field: string, model: ModelRules, mode: ArkMode, rule: string): ArkRefusal {
  return invalid(
    `the parameter ${field} specified in the request ${rule} for model ${model.name} in ${mode}`,
    field,
  );
}

interface Task {
  readonly id: string;
  readonly model: string;
  readonly rules: ModelRules;
  readonly createdAt: number;
  status: ArkTaskStatus;
  polls: number;
  readonly width: number;
  readonly height: number;
  readonly resolution: string;
  readonly ratio: string;
  readonly duration: number;
  readonly frameCount: number;
  readonly seed: number;
  readonly audio: boolean;
  readonly signature: string;
  /** Where its status changes are POSTed [S17]. */
  readonly callbackUrl: string | undefined;
  /** `return_last_frame: true` [S18]. */
  readonly lastFrame: boolean;
  file?: string;
  lastFrameFile?: string;
  error?: { code: string; message: string };
}

interface ContentItem {
  readonly type: string;
  readonly url?: string;
  readonly role?: string;
  readonly text?: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function requestId(): string {
  return `021${Date.now()}${randomBytes(18).toString('hex')}`;
}

function taskId(): string {
  const stamp = new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14);
  const suffix = Array.from(randomBytes(5), (byte) => 'abcdefghijklmnopqrstuvwxyz0123456789'[byte % 36]).join(
    '',
  );
  return `cgt-${stamp}-${suffix}`;
}

function nearestRatio(width: number, height: number): string {
  const target = Math.log(width / height);
  let best = '16:9';
  for (const ratio of RATIOS) {
    const [w, h] = ratio.split(':').map(Number) as [number, number];
    const [bw, bh] = best.split(':').map(Number) as [number, number];
    if (Math.abs(Math.log(w / h) - target) < Math.abs(Math.log(bw / bh) - target)) best = ratio;
  }
  return best;
}

export class FakeArkServer {
  readonly creates: RecordedArkCreate[] = [];
  readonly requests: RecordedArkRequest[] = [];
  /** Ids the server was asked to delete, the task's status then, and the HTTP status answered. */
  readonly deletes: {
    readonly id: string;
    readonly statusBefore: ArkTaskStatus;
    readonly answered: number;
  }[] = [];
  outcome: FakeArkOutcome = 'succeed';
  /** Polls a task answers `queued`, then `running`, before its outcome. */
  pollsQueued = 1;
  pollsRunning = 2;
  /** Answers to the next create requests, before any is read (rate limits, overload, an internal error). */
  readonly busyAnswers: ScriptedAnswer[] = [];
  /** Answers to the next task polls. */
  readonly busyPolls: ScriptedAnswer[] = [];
  /** Prompt words moderation refuses (400 InputTextSensitiveContentDetected [S3, S14]). */
  readonly flaggedWords: string[] = [];
  /** What stands between Ark and the gateway its callbacks go to. */
  readonly callbackNetwork = new CallbackNetwork();
  /** Every callback attempt, as it was answered. */
  readonly callbacks: SentCallback[] = [];
  readonly #options: FakeArkOptions;
  readonly #http: LoopbackServer;
  readonly #tasks = new Map<string, Task>();
  readonly #waiters: {
    predicate: (r: RecordedArkRequest) => boolean;
    resolve: (r: RecordedArkRequest) => void;
  }[] = [];

  private constructor(options: FakeArkOptions) {
    this.#options = options;
    this.#http = new LoopbackServer((req, res) => this.#handle(req, res));
  }

  static async start(options: FakeArkOptions): Promise<FakeArkServer> {
    const fake = new FakeArkServer(options);
    await fake.#http.listen();
    return fake;
  }

  get url(): string {
    return this.#http.url;
  }

  /** The API's base URL, as an engine's `base_url` names it. */
  get baseUrl(): string {
    return `${this.url}/api/v3`;
  }

  /** A task's status now, undefined once deleted. */
  statusOf(id: string): ArkTaskStatus | undefined {
    return this.#tasks.get(id)?.status;
  }

  /** Moves a queued task to `running`, as Ark does in its own time, and calls back [S17]. */
  async start(id: string): Promise<SentCallback | undefined> {
    const task = this.#mustTask(id);
    if (task.status !== 'queued') throw new Error(`task ${id} is ${task.status}, not queued`);
    task.status = 'running';
    return this.#callBack(task);
  }

  /** Ends a queued or running task with `outcome`, as Ark does in its own time, and calls back [S17]. */
  async finish(id: string): Promise<SentCallback | undefined> {
    const task = this.#mustTask(id);
    if (task.status !== 'queued' && task.status !== 'running') {
      throw new Error(`task ${id} is ${task.status} already`);
    }
    await this.#finish(task);
    return this.#callBack(task);
  }

  #mustTask(id: string): Task {
    const task = this.#tasks.get(id);
    if (!task) throw new Error(`no task ${id}`);
    return task;
  }

  /** The task object POSTed to its `callback_url`; a final status is sent again while unanswered [S17]. */
  #callBack(task: Task): Promise<SentCallback | undefined> {
    if (!task.callbackUrl) return Promise.resolve(undefined);
    const final = task.status !== 'queued' && task.status !== 'running';
    return deliverWithRetries({
      network: this.callbackNetwork,
      url: task.callbackUrl,
      body: JSON.stringify(this.#object(task)),
      headers: () => ({}),
      attempts: final ? 4 : 1,
      retryDelayMs: 50,
      timeoutMs: 5000,
      sent: this.callbacks,
    });
  }

  /** Resolves with the first request (already answered, or yet to come) that matches. */
  waitForRequest(predicate: (request: RecordedArkRequest) => boolean): Promise<RecordedArkRequest> {
    const seen = this.requests.find(predicate);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.#waiters.push({ predicate, resolve }));
  }

  close(): Promise<void> {
    return this.#http.close();
  }

  #record(request: RecordedArkRequest): void {
    this.requests.push(request);
    for (const waiter of [...this.#waiters]) {
      if (!waiter.predicate(request)) continue;
      this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
      waiter.resolve(request);
    }
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const rid = requestId();
    let status = 200;
    let body: unknown;
    let file: { path: string; type: string } | undefined;
    let code: string | undefined;
    let headers: Readonly<Record<string, string>> = {};
    try {
      const raw = await readBody(req);
      if (url.pathname.startsWith('/tos/')) {
        file = await this.#signedFile(req, url);
      } else {
        this.#authenticate(req);
        body = await this.#route(req, url, raw);
      }
    } catch (caught) {
      const error =
        caught instanceof ArkRefusal
          ? caught
          : new ArkRefusal(500, 'InternalServiceError', `The fake failed: ${String(caught)}`);
      status = error.status;
      code = error.code;
      headers = error.headers;
      const type = HTTP_TYPES[status] ?? 'BadRequest';
      body = { error: { code, message: `${error.detail} Request id: ${rid}`, param: error.param, type } };
    }
    if (file) {
      await sendFile(res, file.path, file.type);
    } else {
      sendJson(res, status, body, { 'x-request-id': rid, ...headers });
    }
    this.#record({
      method: req.method ?? '',
      path: url.pathname,
      search: url.search,
      authorization: req.headers.authorization,
      status,
      code,
      at: Date.now(),
    });
  }

  /** Every API route takes only `Authorization: Bearer <key>` [S3 "only supports API Key authentication"; S9]. */
  #authenticate(req: IncomingMessage): void {
    if (req.headers.authorization !== `Bearer ${this.#options.apiKey}`) {
      throw new ArkRefusal(
        401,
        'AuthenticationError',
        'The API key or AK/SK in the request is missing or invalid.',
      );
    }
  }

  async #route(req: IncomingMessage, url: URL, raw: Buffer): Promise<unknown> {
    const method = req.method ?? 'GET';
    const path = url.pathname;
    const tasks = '/api/v3/contents/generations/tasks';
    if (path === tasks && method === 'POST') {
      const busy = this.busyAnswers.shift();
      if (busy) throw new ArkRefusal(busy.status, busy.code, 'The service is busy.', '', busy.headers);
      return this.#create(req, raw);
    }
    if (path === tasks && method === 'GET') return this.#list(url);
    const match = /^\/api\/v3\/contents\/generations\/tasks\/([^/]+)$/.exec(path);
    if (!match) throw new ArkRefusal(404, 'NotFound', `The requested resource ${path} is not found.`);
    const id = decodeURIComponent(match[1] ?? '');
    const task = this.#tasks.get(id);
    if (!task) throw new ArkRefusal(404, 'NotFound.Task', `The specified task ${id} is not found.`);
    if (method === 'GET') {
      const busy = this.busyPolls.shift();
      if (busy) throw new ArkRefusal(busy.status, busy.code, 'The service is busy.', '', busy.headers);
      return this.#poll(task);
    }
    if (method === 'DELETE') return this.#delete(task);
    throw new ArkRefusal(404, 'NotFound', `The requested resource ${path} is not found.`);
  }

  /** `page_num`, `page_size` in [1, 500], `filter.status` [S3 list page; S5]. */
  #list(url: URL): unknown {
    const pageOf = (name: string): number => {
      const value = url.searchParams.get(name);
      if (value === null) return name === 'page_size' ? 10 : 1;
      const page = Number(value);
      if (!Number.isInteger(page) || page < 1 || page > 500) {
        throw invalid(`the parameter ${name} specified in the request is not valid`, name);
      }
      return page;
    };
    const size = pageOf('page_size');
    const num = pageOf('page_num');
    const status = url.searchParams.get('filter.status');
    if (status !== null && !['queued', 'running', 'cancelled', 'succeeded', 'failed'].includes(status)) {
      throw invalid('the parameter filter.status specified in the request is not valid', 'filter.status');
    }
    const all = [...this.#tasks.values()]
      .filter((task) => status === null || task.status === status)
      .reverse();
    return { total: all.length, items: all.slice((num - 1) * size, num * size).map((t) => this.#object(t)) };
  }

  async #create(req: IncomingMessage, raw: Buffer): Promise<unknown> {
    if (!(req.headers['content-type'] ?? '').toLowerCase().startsWith('application/json')) {
      throw invalid('we could not parse the JSON body of your request');
    }
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      throw invalid('we could not parse the JSON body of your request');
    }
    if (!isRecord(body)) throw invalid('we could not parse the JSON body of your request');
    if (body.model === undefined) {
      throw new ArkRefusal(
        400,
        'MissingParameter',
        'The request failed because it is missing `model`.',
        'model',
      );
    }
    if (typeof body.model !== 'string')
      throw invalid('the parameter model specified in the request is not valid', 'model');
    if (body.content === undefined) {
      throw new ArkRefusal(
        400,
        'MissingParameter',
        'The request failed because it is missing `content`.',
        'content',
      );
    }
    const rules = MODELS.get(body.model);
    if (!rules) {
      throw new ArkRefusal(
        404,
        'InvalidEndpointOrModel.NotFound',
        `The model or endpoint ${body.model} does not exist or you do not have access to it.`,
      );
    }
    if (this.#options.notActivated?.includes(body.model)) {
      throw new ArkRefusal(
        404,
        'ModelNotOpen',
        `Your account 3003309395 has not activated the model ${body.model}. Please activate the model service in the Ark Console.`,
      );
    }
    const items = this.#contentItems(body.content);
    const mode = await this.#checkContent(items, rules);
    this.#checkTypes(body);
    this.#checkTools(body.tools, rules, mode);
    const chosen = this.#checkValues(body, rules, mode);
    const text = items
      .filter((item) => item.type === 'text')
      .map((item) => item.text ?? '')
      .join(' ');
    if (this.flaggedWords.some((word) => text.includes(word))) {
      throw new ArkRefusal(
        400,
        'InputTextSensitiveContentDetected',
        'The request failed because the input text may contain sensitive information.',
      );
    }
    const callbackUrl = body.callback_url as string | undefined;
    if (callbackUrl !== undefined && !/^https?:\/\/[^\s/]+/i.test(callbackUrl)) {
      throw invalid('the parameter callback_url specified in the request is not valid', 'callback_url');
    }
    const queued = [...this.#tasks.values()].filter((task) => task.status === 'queued').length;
    if (queued >= (this.#options.queueLimit ?? 120)) {
      throw new ArkRefusal(429, 'QuotaExceeded', 'The request has exceeded the quota.');
    }
    const ratio = chosen.ratio === 'adaptive' ? await this.#adaptiveRatio(items, mode) : chosen.ratio;
    const sizes = SIZES_BY_SERIES[rules.series][chosen.resolution] ?? {};
    const [width, height] = (sizes[ratio] ?? '1280x720').split('x').map(Number) as [number, number];
    const id = taskId();
    const ignoredFields = Object.keys(body).filter(
      (field) => !KNOWN_FIELDS.has(field) && !(field === 'output_format' && rules.outputFormat),
    );
    this.creates.push({ id, body, mode, ignoredFields });
    this.#tasks.set(id, {
      id,
      model: body.model,
      rules,
      createdAt: Math.floor(Date.now() / 1000),
      status: 'queued',
      polls: 0,
      width,
      height,
      resolution: chosen.resolution,
      ratio,
      duration: chosen.duration,
      frameCount: chosen.frames ?? FPS * chosen.duration + 1,
      seed: typeof body.seed === 'number' && body.seed >= 0 ? body.seed : randomBytes(2).readUInt16BE(),
      audio: rules.audio && body.generate_audio !== false,
      signature: randomBytes(32).toString('hex'),
      callbackUrl,
      lastFrame: body.return_last_frame === true,
    });
    return { id };
  }

  /** Item types [live S7 "supported values are: text, image_url, audio_url, video_url"; S1]; url objects [S7]. */
  #contentItems(content: unknown): ContentItem[] {
    if (!Array.isArray(content))
      throw invalid('the parameter content specified in the request is not valid', 'content');
    return content.map((item, index) => {
      const where = `content[${index}]`;
      if (!isRecord(item) || typeof item.type !== 'string' || !CONTENT_TYPES.includes(item.type)) {
        throw invalid(
          `the parameter ${where}.type specified in the request is not valid: supported values are: text, image_url, audio_url, video_url`,
          `${where}.type`,
        );
      }
      if (item.role !== undefined && typeof item.role !== 'string') {
        throw invalid(`the parameter ${where}.role specified in the request is not valid`, `${where}.role`);
      }
      const role = item.role as string | undefined;
      if (item.type === 'text') {
        if (typeof item.text !== 'string')
          throw invalid(`the parameter ${where}.text specified in the request is not valid`, `${where}.text`);
        return { type: 'text', text: item.text };
      }
      if (item.type === 'draft_task') {
        throw invalid(
          `the parameter ${where}.draft_task specified in the request is not valid: draft task not found`,
        );
      }
      const media = item[item.type];
      if (!isRecord(media) || typeof media.url !== 'string' || media.url === '') {
        throw invalid(
          `The parameter \`${where}.${item.type}\` specified in the request is not valid`,
          `${where}.${item.type}`,
        );
      }
      return { type: item.type, url: media.url, role };
    });
  }

  /** Roles, counts and combinations [S4 "content" and its combinations; live S7, S12]. */
  async #checkContent(items: readonly ContentItem[], rules: ModelRules): Promise<ArkMode> {
    const images = items.filter((item) => item.type === 'image_url');
    const videos = items.filter((item) => item.type === 'video_url');
    const audios = items.filter((item) => item.type === 'audio_url');
    if (images.length > 1 && images.some((image) => image.role === undefined)) {
      throw invalid(
        'The parameter `content` specified in the request is not valid: role must be specified for image contents.',
        'content',
      );
    }
    if (images.some((image) => image.role !== undefined && !IMAGE_ROLES.includes(image.role))) {
      throw invalid(
        'The parameter `content` specified in the request is not valid: invalid role specified for image content.',
        'content',
      );
    }
    const first = images.filter((image) => image.role === 'first_frame' || image.role === undefined).length;
    const last = images.filter((image) => image.role === 'last_frame').length;
    const references = images.filter((image) => image.role === 'reference_image').length;
    for (const [count, what] of [
      [first, 'first'],
      [last, 'last'],
    ] as const) {
      if (count > 1) {
        throw invalid(
          `The parameter \`content\` specified in the request is not valid: expected at most one ${what} frame image content but got ${count} instead.`,
          'content',
        );
      }
    }
    if (last > 0 && first === 0) {
      throw invalid(
        'The parameter `content` specified in the request is not valid: last frame requires a first frame.',
        'content',
      );
    }
    if (first + last > 0 && references + videos.length + audios.length > 0) {
      throw invalid(
        'The parameter `content` specified in the request is not valid: first/last frame content cannot be mixed with reference media content.',
        'content',
      );
    }
    for (const video of videos) {
      if (video.role !== 'reference_video') {
        throw invalid(
          'The parameter `content` specified in the request is not valid: reference media mode requires video role to be reference_video.',
          'content',
        );
      }
    }
    for (const audio of audios) {
      if (audio.role !== 'reference_audio') {
        throw invalid(
          'The parameter `content` specified in the request is not valid: reference media mode requires audio role to be reference_audio.',
          'content',
        );
      }
    }
    const mode: ArkMode =
      references + videos.length + audios.length > 0 ? 'r2v' : last > 0 ? 'flf2v' : first > 0 ? 'i2v' : 't2v';
    if (mode === 't2v' && !items.some((item) => item.type === 'text' && item.text)) {
      throw new ArkRefusal(
        400,
        'MissingParameter',
        'The request failed because it is missing `content.text`.',
        'content',
      );
    }
    if (last > 0 && !rules.lastFrame) {
      throw invalid(
        `the parameter content specified in the request is not valid: last frame is not supported for model ${rules.name}`,
        'content',
      );
    }
    const limits = [
      [references, rules.referenceImages, 'reference images'],
      [videos.length, rules.referenceVideos, 'reference videos'],
      [audios.length, rules.referenceAudios, 'reference audios'],
    ] as const;
    for (const [count, most, what] of limits) {
      if (count > most) {
        throw invalid(
          `the parameter content specified in the request is not valid: ${most === 0 ? `${what} are not supported` : `at most ${most} ${what} are supported`} for model ${rules.name}`,
          'content',
        );
      }
    }
    if (audios.length > 0 && references + videos.length === 0 && !rules.audioAlone) {
      throw invalid(
        `the parameter content specified in the request is not valid: reference audio requires at least one reference image or video for model ${rules.name}`,
        'content',
      );
    }
    for (const [index, item] of items.entries()) {
      if (item.type === 'image_url') await this.#checkImage(item.url ?? '', index);
      if (item.type === 'video_url') await this.#checkVideo(item.url ?? '', index);
      if (item.type === 'audio_url') await this.#checkAudio(item.url ?? '', index);
    }
    return mode;
  }

  /** `data:image/<format>;base64,` [S4]: 300–6000 px a side, width/height 0.4–2.5, under 30 MB [S4, S3, S5]. */
  async #checkImage(url: string, index: number): Promise<void> {
    const where = `content[${index}].image_url`;
    if (/^https?:\/\//i.test(url)) return this.#download(url, where);
    if (url.startsWith('asset://')) return this.#checkAssetId(url, where);
    const match = /^data:image\/([a-z]+);base64,(.*)$/s.exec(url);
    if (!match || !IMAGE_FORMATS.includes(match[1] ?? '')) {
      throw invalid(
        `The parameter \`${where}\` specified in the request is not valid: unsupported image url`,
        where,
      );
    }
    const bytes = Buffer.from(match[2] ?? '', 'base64');
    if (bytes.length >= 30 * 1024 * 1024) {
      throw invalid(
        `The parameter \`${where}\` specified in the request is not valid: image size must be less than 30 MB`,
        where,
      );
    }
    let size: { width: number; height: number };
    try {
      size = await loadImage(bytes);
    } catch {
      throw invalid(
        `The parameter \`${where}\` specified in the request is not valid: image cannot be decoded`,
        where,
      );
    }
    const { width, height } = size;
    const shape = width / height;
    if (Math.min(width, height) < 300 || Math.max(width, height) > 6000 || shape < 0.4 || shape > 2.5) {
      throw invalid(
        `The parameter \`${where}\` specified in the request is not valid: image ${width}x${height} is outside the supported size (300-6000 px, aspect ratio 0.4-2.5)`,
        where,
      );
    }
  }

  /** A web URL or `asset://` only; an inline video is refused [S4; live S7]. */
  async #checkVideo(url: string, index: number): Promise<void> {
    if (/^https?:\/\//i.test(url)) return this.#download(url, `content[${index}].video_url`);
    if (url.startsWith('asset://')) return this.#checkAssetId(url, `content[${index}].video_url`);
    throw invalid(
      'The parameter `content` specified in the request is not valid: reference_video must be provided as a web url.',
      'content',
    );
  }

  /** WAV or MP3, `data:audio/<format>;base64,` or a URL [S4; live S7]. */
  async #checkAudio(url: string, index: number): Promise<void> {
    const where = `content[${index}].audio_url`;
    if (/^https?:\/\//i.test(url)) return this.#download(url, where);
    if (url.startsWith('asset://')) return this.#checkAssetId(url, where);
    const match = /^data:audio\/(wav|mp3);base64,(.*)$/s.exec(url);
    const bytes = Buffer.from(match?.[2] ?? '', 'base64');
    const wav =
      bytes.subarray(0, 4).toString('latin1') === 'RIFF' &&
      bytes.subarray(8, 12).toString('latin1') === 'WAVE';
    const mp3 =
      bytes.subarray(0, 3).toString('latin1') === 'ID3' ||
      (bytes[0] === 0xff && ((bytes[1] ?? 0) & 0xe6) === 0xe2);
    if (!match || !(match[1] === 'wav' ? wav : mp3)) {
      throw invalid(
        `The parameter \`${where}\` specified in the request is not valid: audio must be wav or mp3`,
        where,
      );
    }
    if (bytes.length > 15 * 1024 * 1024) {
      throw invalid(
        `The parameter \`${where}\` specified in the request is not valid: audio size must be at most 15 MB`,
        where,
      );
    }
  }

  /** Ark downloads web URLs when the task is created; one it cannot fetch is refused then [live S8]. */
  async #download(url: string, where: string): Promise<void> {
    const answer = await fetch(url, { signal: AbortSignal.timeout(5000) }).catch(() => undefined);
    await answer?.arrayBuffer().catch(() => undefined);
    if (!answer?.ok) {
      throw invalid(
        `The parameter \`${where}\` specified in the request is not valid: resource download failed.`,
        where,
      );
    }
  }

  /** `[{"type": "web_search"}]`, in t2v, on a model that searches [S19, assumed]. */
  #checkTools(tools: unknown, rules: ModelRules, mode: ArkMode): void {
    if (tools === undefined) return;
    const wellFormed =
      Array.isArray(tools) &&
      tools.length === 1 &&
      tools.every((tool) => isRecord(tool) && tool.type === 'web_search' && Object.keys(tool).length === 1);
    if (!wellFormed) {
      throw invalid(
        'the parameter tools specified in the request is not valid: supported tools are: web_search',
        'tools',
      );
    }
    if (!rules.webSearch || mode !== 't2v') {
      throw invalidValue('tools', rules, mode, 'is not supported: web search is for text-to-video');
    }
  }

  /** `asset://<id>` [S20]: an id, nothing else. */
  #checkAssetId(url: string, where: string): void {
    if (!/^asset:\/\/[\w.-]+$/.test(url)) {
      throw invalid(
        `The parameter \`${where}\` specified in the request is not valid: invalid asset id`,
        where,
      );
    }
  }

  /** Known fields' types [S4, S18; live S7 `return_last_frame: "yes"` → 400]. */
  #checkTypes(body: Record<string, unknown>): void {
    const wrong = (field: string): ArkRefusal =>
      invalid(`the parameter ${field} specified in the request is not valid`, field);
    for (const field of ['return_last_frame', 'generate_audio', 'draft', 'camera_fixed', 'watermark']) {
      if (body[field] !== undefined && typeof body[field] !== 'boolean') throw wrong(field);
    }
    for (const field of ['callback_url', 'service_tier', 'safety_identifier', 'resolution', 'ratio']) {
      if (body[field] !== undefined && typeof body[field] !== 'string') throw wrong(field);
    }
    for (const field of ['duration', 'frames', 'seed', 'execution_expires_after', 'priority']) {
      if (body[field] !== undefined && !Number.isInteger(body[field])) throw wrong(field);
    }
    const seed = body.seed as number | undefined;
    if (seed !== undefined && (seed < -1 || seed > SEED_MAX)) throw wrong('seed');
    const expires = body.execution_expires_after as number | undefined;
    if (expires !== undefined && (expires < 3600 || expires > 259_200))
      throw wrong('execution_expires_after');
    const priority = body.priority as number | undefined;
    if (priority !== undefined && (priority < 0 || priority > 9)) throw wrong('priority');
    if (typeof body.safety_identifier === 'string' && body.safety_identifier.length > 64) {
      throw wrong('safety_identifier');
    }
  }

  /** Values per model and mode [S4 per-model table; live S7, S8]. */
  #checkValues(
    body: Record<string, unknown>,
    rules: ModelRules,
    mode: ArkMode,
  ): { resolution: string; ratio: string; duration: number; frames?: number } {
    const resolution = (body.resolution as string | undefined) ?? rules.defaultResolution;
    if (!rules.resolutions.includes(resolution))
      throw invalidValue('resolution', rules, mode, 'is not valid');
    const framesDefault = rules.framesAdaptiveOnly && (mode === 'i2v' || mode === 'flf2v');
    const ratio =
      (body.ratio as string | undefined) ?? (mode === 't2v' && !rules.adaptiveT2v ? '16:9' : 'adaptive');
    if (!RATIOS.includes(ratio) && ratio !== 'adaptive')
      throw invalidValue('ratio', rules, mode, 'is not valid');
    if (ratio === 'adaptive' && mode === 't2v' && !rules.adaptiveT2v) {
      throw invalidValue('ratio', rules, mode, 'is not valid');
    }
    if (ratio !== 'adaptive' && framesDefault) {
      throw invalidValue(
        'ratio',
        rules,
        mode,
        'is not valid: for first-frame or first-last-frame generation, the output ratio follows the first-frame image, must be adaptive',
      );
    }
    const requested = (body.duration as number | undefined) ?? 5;
    if (requested !== -1 || !rules.autoDuration) {
      if (requested > rules.maxDuration) {
        throw invalidValue('duration', rules, mode, `must be less than or equal to ${rules.maxDuration}`);
      }
      if (requested < rules.minDuration) {
        throw invalidValue('duration', rules, mode, `must be greater than or equal to ${rules.minDuration}`);
      }
    }
    const duration = requested === -1 ? 5 : requested;
    const frames = body.frames as number | undefined;
    if (frames !== undefined && (!rules.frames || frames < 29 || frames > 289 || (frames - 25) % 4 !== 0)) {
      throw invalidValue('frames', rules, mode, 'is not valid');
    }
    if (body.service_tier !== undefined && !['default', 'flex'].includes(body.service_tier as string)) {
      throw invalidValue('service_tier', rules, mode, 'is not valid');
    }
    if (body.service_tier === 'flex' && !rules.flex)
      throw invalidValue('service_tier', rules, mode, 'is not valid');
    if (body.draft === true && (!rules.draft || resolution !== '480p')) {
      throw invalidValue('draft', rules, mode, 'is not valid');
    }
    if (
      rules.outputFormat &&
      body.output_format !== undefined &&
      !['mp4', 'mov'].includes(body.output_format as string)
    ) {
      throw invalidValue('output_format', rules, mode, 'is not valid');
    }
    return {
      resolution,
      ratio,
      duration: frames === undefined ? duration : Math.floor(frames / FPS),
      frames,
    };
  }

  /** `adaptive`: the first image's nearest ratio [S4, S5]; without a decodable one, the fake's choice (16:9). */
  async #adaptiveRatio(items: readonly ContentItem[], mode: ArkMode): Promise<string> {
    const image = items.find(
      (item) =>
        item.type === 'image_url' &&
        (mode === 'r2v' ? item.role === 'reference_image' : item.role !== 'last_frame'),
    );
    const match = /^data:image\/[a-z]+;base64,(.*)$/s.exec(image?.url ?? '');
    if (!match) return '16:9';
    const { width, height } = await loadImage(Buffer.from(match[1] ?? '', 'base64'));
    return nearestRatio(width, height);
  }

  /** Each poll moves the task on: `queued`, `running`, then its outcome. */
  async #poll(task: Task): Promise<unknown> {
    if (task.status === 'queued' || task.status === 'running') {
      const before = task.status;
      task.polls++;
      if (task.polls > this.pollsQueued) task.status = 'running';
      const done = this.outcome !== 'never-finish' && task.polls > this.pollsQueued + this.pollsRunning;
      if (done) await this.#finish(task);
      if (task.status !== before) void this.#callBack(task);
    }
    return this.#object(task);
  }

  async #finish(task: Task): Promise<void> {
    switch (this.outcome) {
      case 'succeed':
        task.file = await this.#makeVideo(task);
        if (task.lastFrame) task.lastFrameFile = await this.#makeLastFrame(task);
        task.status = 'succeeded';
        return;
      case 'fail':
        task.status = 'failed';
        task.error = {
          code: 'InternalServiceError',
          message: `The service encountered an unexpected internal error. Please retry later. Request ID: ${requestId()}`,
        };
        return;
      case 'refuse-output':
        task.status = 'failed';
        task.error = {
          code: 'OutputVideoSensitiveContentDetected',
          message: `The request failed because the output video may contain sensitive information.Request ID: ${requestId()}`,
        };
        return;
      case 'expire':
        task.status = 'expired';
        return;
      case 'never-finish':
        return;
    }
  }

  /** The task object [S1 content_generation_task.py; S3, S5 retrieve; live S11]. */
  #object(task: Task): unknown {
    const base = {
      id: task.id,
      model: task.model,
      status: task.status,
      created_at: task.createdAt,
      updated_at: Math.floor(Date.now() / 1000),
    };
    if (task.status === 'queued' || task.status === 'running' || task.status === 'cancelled') return base;
    const settings = {
      seed: task.seed,
      resolution: task.resolution,
      ratio: task.ratio,
      duration: task.duration,
      framespersecond: FPS,
      service_tier: 'default',
      execution_expires_after: 172_800,
      ...(task.rules.audio ? { generate_audio: task.audio } : {}),
    };
    if (task.status !== 'succeeded') return { ...base, error: task.error ?? null, ...settings };
    const tokens = Math.round((task.width * task.height * task.frameCount) / 1024);
    return {
      ...base,
      content: {
        video_url: `${this.url}/tos/ark-content-generation/${task.id}.mp4?X-Tos-Algorithm=TOS4-HMAC-SHA256&X-Tos-Expires=86400&X-Tos-Signature=${task.signature}`,
        ...(task.lastFrameFile && {
          last_frame_url: `${this.url}/tos/ark-content-generation/${task.id}-last-frame.png?X-Tos-Algorithm=TOS4-HMAC-SHA256&X-Tos-Expires=86400&X-Tos-Signature=${task.signature}`,
        }),
      },
      usage: { completion_tokens: tokens, total_tokens: tokens },
      ...settings,
    };
  }

  /**
   * DELETE [S5 status table; S6]: a queued task is cancelled, a finished one deleted; a running one cannot be
   * (409 [live S8, S16]); a cancelled one neither (code: the fake's choice). Answers `{}` [S3, S16].
   */
  #delete(task: Task): unknown {
    const statusBefore = task.status;
    const refuse = (code: string, detail: string): ArkRefusal => {
      this.deletes.push({ id: task.id, statusBefore, answered: 409 });
      return new ArkRefusal(409, code, detail);
    };
    if (statusBefore === 'running') {
      throw refuse(
        'InvalidAction.RunningTaskDeletion',
        `Cannot delete task \`${task.id}\` because it is currently running.`,
      );
    }
    if (statusBefore === 'cancelled') {
      throw refuse(
        'InvalidAction.CancelledTaskDeletion',
        `Cannot delete task \`${task.id}\` because it is cancelled.`,
      );
    }
    if (statusBefore === 'queued') task.status = 'cancelled';
    else this.#tasks.delete(task.id);
    this.deletes.push({ id: task.id, statusBefore, answered: 200 });
    return {};
  }

  /** The signed TOS link (the video, or its last frame): its signature must match, and no other credentials may come with it. */
  async #signedFile(req: IncomingMessage, url: URL): Promise<{ path: string; type: string }> {
    const match = /^\/tos\/ark-content-generation\/([^/]+?)(-last-frame\.png|\.mp4)$/.exec(url.pathname);
    const task = this.#tasks.get(match?.[1] ?? '');
    const path = match?.[2] === '.mp4' ? task?.file : task?.lastFrameFile;
    if (req.headers.authorization !== undefined) {
      throw new ArkRefusal(400, 'InvalidArgument', 'Only one auth mechanism allowed.');
    }
    if (!task || !path || url.searchParams.get('X-Tos-Signature') !== task.signature) {
      throw new ArkRefusal(403, 'AccessDenied', 'Request has expired or the signature does not match.');
    }
    return { path, type: match?.[2] === '.mp4' ? 'video/mp4' : 'image/png' };
  }

  /** The last frame as a PNG of the video's size, without watermark [S18]: the video's flat colour. */
  async #makeLastFrame(task: Task): Promise<string> {
    const path = join(this.#options.cacheDir, `ark-last-frame-${task.width}x${task.height}.png`);
    const canvas = createCanvas(task.width, task.height);
    const context = canvas.getContext('2d');
    context.fillStyle = `#${LAST_FRAME_COLOUR}`;
    context.fillRect(0, 0, task.width, task.height);
    await writeFile(path, await canvas.encode('png'));
    return path;
  }

  /** An MP4 of the task's shape (a flat colour, a mono tone when it has sound), made once per shape. */
  #makeVideo(task: Task): Promise<string> {
    const { width, height, frameCount, audio } = task;
    return fakeVideoFile(this.#options.cacheDir, {
      width,
      height,
      fps: FPS,
      frames: frameCount,
      picture: { colour: `0x${LAST_FRAME_COLOUR}` },
      tone: audio ? { frequency: 660, sampleRate: 44100, channels: 1 } : undefined,
    });
  }
}

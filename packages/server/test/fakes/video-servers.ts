/**
 * Strict fakes of the three servers the `openai` engine speaks to, each following its own source:
 *
 * - OpenAI (Sora 2): openai/openai-openapi `openapi.yaml` @ f85dbe223d40e1a31cba812ab2d755c7e98a92a3
 *   (CreateVideoMultipartBody, CreateVideoJsonBody, VideoResource, VideoSize, VideoSeconds, VideoModel,
 *   DeletedVideoResource, Error), openai-python `resources/videos.py` (multipart), OpenAI's Sora 2 prompting
 *   guide (openai/openai-cookbook `examples/sora/sora2_prompting_guide.ipynb`: sizes per model, JPEG/PNG/WebP
 *   references that must match `size`), and OpenAI's published error bodies (401 without or with a wrong key,
 *   400 `unknown_parameter` "Unknown parameter: 'seed'.", `invalid_value` "Invalid value: '10'. Supported values
 *   are: …", "Inpaint image must match the requested width and height").
 * - SGLang Diffusion: sgl-project/sglang `python/sglang/multimodal_gen/runtime/entrypoints/openai/video_api.py`
 *   and `protocol.py` (read at modal-projects/sglang 8905cbd42f4a, last changed upstream in #27168; and the
 *   first releases, video_api.py @ 25f03e6ee4d4): JSON into VideoGenerationsRequest (extra="allow", errors 400
 *   `{"detail": "Invalid request body: …"}`), multipart read from the first releases' form fields only
 *   (`prompt`, `input_reference`, `model`, `seconds`, `size`, `fps`, `num_frames`, `extra_body`: any other
 *   field is dropped, as those releases do) with `extra_body` keys honoured as settings (later releases);
 *   `size` only as `WIDTHxHEIGHT`; default seed 42, 24 fps × seconds; statuses `queued` then `completed` or
 *   `failed` with progress 0 → 100; no authentication (the header is ignored); `DELETE` only forgets.
 * - vLLM-Omni: vllm-project/vllm-omni `vllm_omni/entrypoints/openai/api_server.py` (`_parse_video_form`,
 *   `create_video`, `_run_video_generation_job`, `delete_video`, `get_video_content`) and
 *   `protocol/videos.py` (read at vraiti/vllm-omni d6240742f365), with vLLM's error handlers and
 *   AuthenticationMiddleware: form data only (a JSON body is an empty form: 400 for the missing prompt),
 *   undeclared fields ignored, `model` must equal the served name, `seconds` `^[1-9]\d*$`, `size`
 *   `^\d+x\d+$`, ranges on the settings; 401 `{"error":"Unauthorized"}`; a failed video's GET answers with
 *   its error code as the HTTP status; `DELETE` of a running video cancels it.
 *
 * Every server makes a real MP4 of what it was asked for, as the real one would shape it (size, frame count,
 * frame rate), so the engine's conforming is exercised; Sora's has a soundtrack, as Sora 2 makes its videos with
 * synchronized sound and its create takes no field to turn it off (CreateVideoJsonBody; the prompting guide's
 * dialogue and sound cues), SGLang's and vLLM-Omni's none. Where the sources are silent the fake chooses and
 * says so: Sora's frame rate (30 fps here), its soundtrack's tone, and how many polls a video takes
 * (`pollsToFinish`).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { loadImage } from '@napi-rs/canvas';
import { LoopbackServer, readBody, sendJson, sendVideoFile } from './fake-http.js';
import { type FakeVideo, fakeVideoFile } from './fake-video-file.js';

export type VideoServerKind = 'openai' | 'sglang' | 'vllm-omni';
export type FakeOutcome = 'complete' | 'fail' | 'never-finish';

export interface FakeVideoServerOptions {
  readonly kind: VideoServerKind;
  /** Where made videos are kept by shape, to copy for the next video of the same shape. */
  readonly cacheDir: string;
  /** OpenAI: the key it takes (required). vLLM-Omni: `--api-key` (optional). SGLang has no keys. */
  readonly apiKey?: string;
  /** SGLang: `--model-path`; vLLM-Omni: the first served model name. Default: Wan 2.2's diffusers path. */
  readonly servedModel?: string;
  /** SGLang: the served model's task type (a T2V model refuses images, an I2V one needs one). Default T2V. */
  readonly task?: 'T2V' | 'I2V' | 'TI2V';
  /** SGLang: a release before #16425 (2026-01), which served the model at `GET /models` and had no `/v1/models`. */
  readonly legacyModelsRoute?: boolean;
  /** What the made videos show: a flat colour (default, cheap to conform), or ffmpeg's moving test pattern. */
  readonly picture?: FakeVideo['picture'];
}

/** What the real server would make of a create request: the video's shape and the settings it used. */
export interface EffectiveRequest {
  readonly model: string;
  readonly prompt: string;
  readonly width: number;
  readonly height: number;
  readonly fps: number;
  readonly frames: number;
  /** Undefined where the server takes no seed (OpenAI). */
  readonly seed?: number;
  /** Further settings the server honoured (`num_inference_steps`, …). */
  readonly settings: Readonly<Record<string, unknown>>;
  /** The reference image as received: its decoded size and declared type. */
  readonly image?: { readonly width: number; readonly height: number; readonly type: string };
}

export interface RecordedCreate {
  readonly contentType: string;
  /** Text fields (multipart) or the JSON body. */
  readonly fields: Readonly<Record<string, unknown>>;
  readonly effective: EffectiveRequest;
}

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly authorization: string | undefined;
  readonly status: number;
}

interface Job {
  readonly id: string;
  readonly effective: EffectiveRequest;
  readonly object: Record<string, unknown>;
  polls: number;
  /** Set once the video file is made. */
  file?: string;
  cancelled: boolean;
}

class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(`HTTP ${status}`);
  }
}

const WAN = 'Wan-AI/Wan2.2-T2V-A14B-Diffusers';
const OPENAI_MODELS = [
  'sora-2',
  'sora-2-pro',
  'sora-2-2025-10-06',
  'sora-2-pro-2025-10-06',
  'sora-2-2025-12-08',
];
const OPENAI_SIZES = ['720x1280', '1280x720', '1024x1792', '1792x1024'];
const OPENAI_PRO_SIZES = ['1024x1792', '1792x1024'];
const OPENAI_SECONDS = ['4', '8', '12'];
const OPENAI_FIELDS = ['model', 'prompt', 'seconds', 'size', 'input_reference'];
/** Sora's output frame rate is not documented; the fake's choice. */
const OPENAI_FPS = 30;
/** SGLang's `DEFAULT_FPS`, `DEFAULT_VIDEO_SECONDS` (openai/utils.py) and SamplingParams' default seed. */
const SGLANG_FPS = 24;
const SGLANG_SECONDS = 4;
const SGLANG_SEED = 42;
/** The multipart form fields of SGLang's first `/v1/videos` release (video_api.py @ 25f03e6). */
const SGLANG_FORM_FIELDS = [
  'prompt',
  'input_reference',
  'model',
  'seconds',
  'size',
  'fps',
  'num_frames',
  'extra_body',
];
/** Wan 2.2 A14B's own frame rate and count, which vLLM-Omni keeps when the request names none. */
const WAN_FPS = 16;
const WAN_FRAMES = 81;

type VllmField = { kind: 'int' | 'float' | 'bool' | 'str' | 'json'; min?: number; max?: number; gt?: number };
/** `_parse_video_form`'s declared fields beside prompt/input_reference/model/seconds/size, with protocol/videos.py's bounds. */
const VLLM_FIELDS: Readonly<Record<string, VllmField>> = {
  image_reference: { kind: 'json' },
  video_reference: { kind: 'json' },
  audio_reference: { kind: 'json' },
  user: { kind: 'str' },
  width: { kind: 'int', min: 1 },
  height: { kind: 'int', min: 1 },
  num_frames: { kind: 'int', min: 1 },
  fps: { kind: 'int', min: 1 },
  num_inference_steps: { kind: 'int', min: 1, max: 200 },
  guidance_scale: { kind: 'float', min: 0, max: 20 },
  guidance_scale_2: { kind: 'float', min: 0, max: 20 },
  boundary_ratio: { kind: 'float', min: 0, max: 1 },
  flow_shift: { kind: 'float' },
  true_cfg_scale: { kind: 'float', min: 0, max: 20 },
  seed: { kind: 'int' },
  generate_sound: { kind: 'bool' },
  sound_duration: { kind: 'float', gt: 0 },
  negative_prompt: { kind: 'str' },
  enable_frame_interpolation: { kind: 'bool' },
  frame_interpolation_exp: { kind: 'int', min: 1 },
  frame_interpolation_scale: { kind: 'float', gt: 0 },
  frame_interpolation_model_path: { kind: 'str' },
  lora: { kind: 'json' },
  extra_params: { kind: 'json' },
};

function openAiError(status: number, message: string, param: string | null, code: string | null): Refusal {
  return new Refusal(status, { error: { message, type: 'invalid_request_error', param, code } });
}

function listOf(values: readonly string[]): string {
  const quoted = values.map((v) => `'${v}'`);
  return quoted.length > 1 ? `${quoted.slice(0, -1).join(', ')}, and ${quoted.at(-1)}` : (quoted[0] ?? '');
}

function sglangError(status: number, detail: string): Refusal {
  return new Refusal(status, { detail });
}

function vllmError(status: number, message: string, param: string | null = null, type?: string): Refusal {
  const phrase = status === 404 ? 'Not Found' : status === 409 ? 'Conflict' : 'Bad Request';
  return new Refusal(status, { error: { message, type: type ?? phrase, param, code: status } });
}

interface ParsedBody {
  readonly contentType: string;
  readonly fields: Record<string, string>;
  readonly files: Record<string, File>;
  /** Set for a JSON body. */
  readonly json?: unknown;
  readonly isForm: boolean;
}

async function parseBody(req: IncomingMessage, body: Buffer): Promise<ParsedBody> {
  const contentType = req.headers['content-type'] ?? '';
  const fields: Record<string, string> = {};
  const files: Record<string, File> = {};
  const lower = contentType.toLowerCase();
  if (lower.includes('multipart/form-data') || lower.startsWith('application/x-www-form-urlencoded')) {
    const form = await new Response(body, { headers: { 'content-type': contentType } }).formData();
    for (const [name, value] of form) {
      if (typeof value === 'string') fields[name] = value;
      else files[name] = value;
    }
    return { contentType, fields, files, isForm: true };
  }
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    json = undefined;
  }
  return { contentType, fields, files, json, isForm: false };
}

async function decodeImage(file: File): Promise<{ width: number; height: number } | undefined> {
  try {
    const image = await loadImage(Buffer.from(await file.arrayBuffer()));
    return { width: image.width, height: image.height };
  } catch {
    return undefined;
  }
}

function parseWxH(size: string): { width: number; height: number } | undefined {
  const match = /^(\d+)x(\d+)$/.exec(size);
  if (!match) return undefined;
  const width = Number(match[1]);
  const height = Number(match[2]);
  return width > 0 && height > 0 ? { width, height } : undefined;
}

export class FakeVideoServer {
  readonly kind: VideoServerKind;
  readonly creates: RecordedCreate[] = [];
  readonly requests: RecordedRequest[] = [];
  /** Ids the server was asked to delete, and what it did. */
  readonly deletes: { readonly id: string; readonly stopped: boolean }[] = [];
  outcome: FakeOutcome = 'complete';
  /** Polls (`GET /v1/videos/{id}`) a video takes to finish. */
  pollsToFinish = 3;
  /** Answers to the next create requests before any is read, as a busy proxy in front would give them. */
  readonly busyAnswers: { status: number; headers?: Record<string, string> }[] = [];
  /** vLLM-Omni: answer the next `DELETE` of a running video with 409 "Cancellation in progress". */
  slowCancel = false;
  readonly #options: FakeVideoServerOptions;
  readonly #http: LoopbackServer;
  readonly #jobs = new Map<string, Job>();

  private constructor(options: FakeVideoServerOptions) {
    this.kind = options.kind;
    this.#options = options;
    this.#http = new LoopbackServer((req, res) => this.#handle(req, res));
  }

  static async start(options: FakeVideoServerOptions): Promise<FakeVideoServer> {
    const fake = new FakeVideoServer(options);
    await fake.#http.listen();
    return fake;
  }

  get url(): string {
    return this.#http.url;
  }

  get servedModel(): string {
    return this.#options.servedModel ?? WAN;
  }

  /** Ids of videos still being made (not finished and not cancelled). */
  get running(): string[] {
    return [...this.#jobs.values()]
      .filter((job) => !job.cancelled && !['completed', 'failed'].includes(String(job.object.status)))
      .map((job) => job.id);
  }

  close(): Promise<void> {
    return this.#http.close();
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://fake').pathname;
    let status = 200;
    let body: unknown;
    let file: string | undefined;
    try {
      const raw = await readBody(req);
      this.#authenticate(req, path);
      ({ body, file } = await this.#route(req, path, raw));
    } catch (error) {
      if (!(error instanceof Refusal)) {
        status = 500;
        body = `Internal Server Error: ${String(error)}`;
      } else {
        status = error.status;
        body = error.body;
      }
    }
    this.requests.push({ method: req.method ?? '', path, authorization: req.headers.authorization, status });
    if (file) {
      await sendVideoFile(res, file);
      return;
    }
    if (typeof body === 'string') {
      res.writeHead(status, { 'content-type': 'text/plain' });
      res.end(body);
      return;
    }
    sendJson(res, status, body);
  }

  #authenticate(req: IncomingMessage, path: string): void {
    const header = req.headers.authorization;
    if (this.kind === 'openai') {
      if (!header) {
        throw openAiError(
          401,
          "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
          null,
          null,
        );
      }
      if (header !== `Bearer ${this.#options.apiKey}`) {
        throw openAiError(401, 'Incorrect API key provided: sk-****. ', null, 'invalid_api_key');
      }
    } else if (this.kind === 'vllm-omni' && this.#options.apiKey !== undefined && path.startsWith('/v1')) {
      const [scheme, token] = (header ?? '').split(/ (.*)/s);
      if (scheme?.toLowerCase() !== 'bearer' || token !== this.#options.apiKey) {
        throw new Refusal(401, { error: 'Unauthorized' });
      }
    }
    // SGLang Diffusion has no authentication: the header is ignored.
  }

  async #route(req: IncomingMessage, path: string, raw: Buffer): Promise<{ body?: unknown; file?: string }> {
    const method = req.method ?? 'GET';
    if (this.#options.legacyModelsRoute && method === 'GET' && path === '/models') {
      return { body: { model_path: this.servedModel, num_gpus: 1, task_type: this.#options.task ?? 'T2V' } };
    }
    if (method === 'GET' && path === '/v1/models' && !this.#options.legacyModelsRoute)
      return { body: this.#models() };
    if (method === 'POST' && path === '/v1/videos') {
      const busy = this.busyAnswers.shift();
      if (busy) throw new Refusal(busy.status, { error: { message: 'busy' } });
      return { body: await this.#create(await parseBody(req, raw)) };
    }
    const match = /^\/v1\/videos\/([^/]+)(\/content)?$/.exec(path);
    const job = match ? this.#jobs.get(decodeURIComponent(match[1] ?? '')) : undefined;
    if (!match) throw this.#notFound('Not Found');
    if (!job) throw this.#notFound('Video not found');
    if (method === 'GET' && match[2])
      return { file: await this.#content(job, new URL(req.url ?? '/', 'http://f')) };
    if (method === 'GET') return this.#poll(job);
    if (method === 'DELETE' && !match[2]) return { body: this.#delete(job) };
    throw new Refusal(405, { detail: 'Method Not Allowed' });
  }

  #notFound(message: string): Refusal {
    if (this.kind === 'openai') return openAiError(404, `No video found with id.`, null, null);
    if (this.kind === 'vllm-omni') return vllmError(404, message);
    return sglangError(404, message);
  }

  #models(): unknown {
    if (this.kind === 'openai') {
      return {
        object: 'list',
        data: ['gpt-4o', 'sora-2', 'sora-2-pro'].map((id) => ({
          id,
          object: 'model',
          created: 0,
          owned_by: 'system',
        })),
      };
    }
    return {
      object: 'list',
      data: [
        {
          id: this.servedModel,
          object: 'model',
          created: 0,
          owned_by: this.kind === 'sglang' ? 'sglang' : 'vllm',
          root: WAN,
          parent: null,
        },
      ],
    };
  }

  async #create(parsed: ParsedBody): Promise<unknown> {
    const { effective, fields } =
      this.kind === 'openai'
        ? await this.#openAiRequest(parsed)
        : this.kind === 'sglang'
          ? await this.#sglangRequest(parsed)
          : await this.#vllmRequest(parsed);
    this.creates.push({ contentType: parsed.contentType, fields, effective });
    const id =
      this.kind === 'openai'
        ? `video_${randomBytes(24).toString('hex')}`
        : this.kind === 'sglang'
          ? randomUUID()
          : `video_gen_${randomBytes(16).toString('hex')}`;
    const created = Math.floor(Date.now() / 1000);
    const object: Record<string, unknown> =
      this.kind === 'openai'
        ? {
            id,
            object: 'video',
            model: effective.model,
            status: 'queued',
            progress: 0,
            created_at: created,
            completed_at: null,
            expires_at: null,
            prompt: effective.prompt,
            size: `${effective.width}x${effective.height}`,
            seconds: String(fields.seconds ?? '4'),
            remixed_from_video_id: null,
            error: null,
          }
        : this.kind === 'sglang'
          ? {
              id,
              object: 'video',
              model: effective.model,
              status: 'queued',
              progress: 0,
              created_at: created,
              size: `${effective.width}x${effective.height}`,
              seconds: String(Math.round(effective.frames / effective.fps)),
              quality: 'standard',
              url: null,
              remixed_from_video_id: null,
              completed_at: null,
              expires_at: null,
              error: null,
              file_path: `/sgl-workspace/outputs/${id}.mp4`,
            }
          : {
              id,
              object: 'video',
              model: effective.model,
              prompt: effective.prompt,
              status: 'queued',
              size: fields.size ?? null,
              progress: 0,
              seconds: fields.seconds ?? '4',
              quality: 'default',
              completed_at: null,
              created_at: created,
              remixed_from_video_id: null,
              error: null,
              media_type: 'video/mp4',
              expires_at: null,
              file_name: null,
            };
    this.#jobs.set(id, { id, effective, object, polls: 0, cancelled: false });
    return object;
  }

  async #openAiRequest(
    parsed: ParsedBody,
  ): Promise<{ effective: EffectiveRequest; fields: Record<string, unknown> }> {
    const lower = parsed.contentType.toLowerCase();
    if (!parsed.isForm && !lower.startsWith('application/json')) {
      throw openAiError(
        400,
        `Invalid Content-Type header (${parsed.contentType}), expected multipart/form-data or application/json.`,
        null,
        null,
      );
    }
    let fields: Record<string, unknown>;
    if (parsed.isForm) {
      fields = { ...parsed.fields, ...parsed.files };
    } else {
      if (typeof parsed.json !== 'object' || parsed.json === null || Array.isArray(parsed.json)) {
        throw openAiError(400, 'We could not parse the JSON body of your request.', null, null);
      }
      fields = parsed.json as Record<string, unknown>;
    }
    for (const name of Object.keys(fields)) {
      const base = name.replace(/\[(image_url|file_id)\]$/, '');
      if (!OPENAI_FIELDS.includes(base))
        throw openAiError(400, `Unknown parameter: '${name}'.`, name, 'unknown_parameter');
    }
    const { prompt, model = 'sora-2', seconds = '4', size = '720x1280' } = fields;
    if (typeof prompt !== 'string' || prompt.length === 0) {
      throw openAiError(400, "Missing required parameter: 'prompt'.", 'prompt', 'missing_required_parameter');
    }
    if (prompt.length > 32_000)
      throw openAiError(400, "Invalid 'prompt': string too long.", 'prompt', 'string_above_max_length');
    if (typeof seconds !== 'string') {
      throw openAiError(
        400,
        `Invalid type for 'seconds': expected one of '4', '8', or '12', but got ${typeof seconds === 'number' ? 'an integer' : typeof seconds} instead.`,
        'seconds',
        'invalid_type',
      );
    }
    const checks: [string, unknown, readonly string[]][] = [
      ['model', model, OPENAI_MODELS],
      ['size', size, OPENAI_SIZES],
      ['seconds', seconds, OPENAI_SECONDS],
    ];
    for (const [param, value, allowed] of checks) {
      if (typeof value !== 'string' || !allowed.includes(value)) {
        throw openAiError(
          400,
          `Invalid value: '${String(value)}'. Supported values are: ${listOf(allowed)}.`,
          param,
          'invalid_value',
        );
      }
    }
    if (!String(model).startsWith('sora-2-pro') && OPENAI_PRO_SIZES.includes(String(size))) {
      throw openAiError(
        400,
        `Invalid value: '${String(size)}'. The size is not supported by ${String(model)}.`,
        'size',
        'invalid_value',
      );
    }
    const frame = parseWxH(String(size)) as { width: number; height: number };
    let image: EffectiveRequest['image'];
    const reference = fields.input_reference;
    if (reference !== undefined) {
      if (!(reference instanceof File))
        throw openAiError(
          400,
          "Invalid 'input_reference': expected a file.",
          'input_reference',
          'invalid_type',
        );
      if (!['image/jpeg', 'image/png', 'image/webp'].includes(reference.type)) {
        throw openAiError(
          400,
          `Invalid file format '${reference.type}'. Supported formats are: 'image/jpeg', 'image/png', and 'image/webp'.`,
          'input_reference',
          'invalid_value',
        );
      }
      const decoded = await decodeImage(reference);
      if (!decoded)
        throw openAiError(
          400,
          'The input_reference image could not be decoded.',
          'input_reference',
          'invalid_value',
        );
      if (decoded.width !== frame.width || decoded.height !== frame.height) {
        throw openAiError(400, 'Inpaint image must match the requested width and height', null, null);
      }
      image = { ...decoded, type: reference.type };
    }
    const textFields = Object.fromEntries(Object.entries(fields).filter(([, v]) => !(v instanceof File)));
    return {
      fields: textFields,
      effective: {
        model: String(model),
        prompt,
        ...frame,
        fps: OPENAI_FPS,
        frames: Number(seconds) * OPENAI_FPS,
        settings: {},
        image,
      },
    };
  }

  async #sglangRequest(
    parsed: ParsedBody,
  ): Promise<{ effective: EffectiveRequest; fields: Record<string, unknown> }> {
    const task = this.#options.task ?? 'T2V';
    let payload: Record<string, unknown>;
    let image: File | undefined;
    let fields: Record<string, unknown>;
    if (parsed.contentType.toLowerCase().includes('multipart/form-data')) {
      // The first releases' form: other fields are not read at all.
      const read = Object.fromEntries(
        Object.entries(parsed.fields).filter(([name]) => SGLANG_FORM_FIELDS.includes(name)),
      );
      fields = { ...parsed.fields };
      if (!read.prompt) throw sglangError(400, 'prompt is required');
      for (const name of ['seconds', 'fps', 'num_frames']) {
        if (read[name] !== undefined && !/^[-+]?\d+$/.test(String(read[name]))) {
          throw new Refusal(422, {
            detail: [
              {
                type: 'int_parsing',
                loc: ['body', name],
                msg: 'Input should be a valid integer, unable to parse string as an integer',
                input: read[name],
              },
            ],
          });
        }
      }
      let extra: Record<string, unknown> = {};
      try {
        const value: unknown = read.extra_body === undefined ? {} : JSON.parse(String(read.extra_body));
        if (value && typeof value === 'object' && !Array.isArray(value))
          extra = value as Record<string, unknown>;
      } catch {
        // video_api.py: an extra_body that is not JSON is ignored.
      }
      const { prompt: _prompt, ...settings } = extra;
      payload = { ...settings };
      for (const name of ['prompt', 'model', 'seconds', 'size', 'fps', 'num_frames']) {
        const value = read[name];
        if (value === undefined) continue;
        payload[name] = ['seconds', 'fps', 'num_frames'].includes(name) ? Number(value) : value;
      }
      image = parsed.files.input_reference;
    } else {
      const body = parsed.json;
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        throw sglangError(
          400,
          'Invalid request body: 1 validation error for VideoGenerationsRequest\nprompt\n  Field required [type=missing]',
        );
      }
      fields = { ...(body as Record<string, unknown>) };
      const { extra_body: extra, ...rest } = body as Record<string, unknown>;
      payload = {
        ...rest,
        ...(extra && typeof extra === 'object' ? (extra as Record<string, unknown>) : {}),
      };
      if (typeof payload.prompt !== 'string') {
        throw sglangError(
          400,
          'Invalid request body: 1 validation error for VideoGenerationsRequest\nprompt\n  Field required [type=missing]',
        );
      }
      if (payload.input_reference !== undefined && payload.input_reference !== null) {
        throw sglangError(400, 'Invalid request body: the fake takes reference images only as uploads');
      }
      for (const name of ['seconds', 'fps', 'num_frames', 'num_inference_steps']) {
        const value = payload[name];
        if (value === undefined || value === null) continue;
        const number = typeof value === 'string' && /^[-+]?\d+$/.test(value) ? Number(value) : value;
        if (typeof number !== 'number' || !Number.isInteger(number)) {
          throw sglangError(
            400,
            `Invalid request body: 1 validation error for VideoGenerationsRequest\n${name}\n  Input should be a valid integer`,
          );
        }
        payload[name] = number;
      }
    }
    if (image && task === 'T2V') throw sglangError(400, 'input_reference is not supported for T2V models.');
    if (!image && task === 'I2V')
      throw sglangError(400, 'input_reference or reference_url is required for image-to-video generation');
    const seed = payload.seed ?? SGLANG_SEED;
    if (typeof seed !== 'number' || !Number.isInteger(seed) || seed < 0) {
      throw sglangError(400, `seed must be a non-negative int or list of ints, got ${JSON.stringify(seed)}`);
    }
    let frame = { width: 1280, height: 720 };
    if (typeof payload.size === 'string' && payload.size !== '') {
      const parsedSize = parseWxH(payload.size.toLowerCase().replaceAll(' ', ''));
      if (!parsedSize) throw sglangError(400, 'size must be formatted as positive WIDTHxHEIGHT');
      frame = parsedSize;
    }
    const seconds = (payload.seconds as number | undefined) ?? SGLANG_SECONDS;
    const fps = (payload.fps as number | undefined) ?? SGLANG_FPS;
    let frames = (payload.num_frames as number | undefined) ?? fps * seconds;
    if (frames <= 0) throw sglangError(400, 'num_frames must be positive');
    // WanI2VCommonConfig.adjust_num_frames: an image-to-video count of the form 4n+1.
    if (task !== 'T2V' && frames % 4 !== 1) frames += (((1 - frames) % 4) + 4) % 4;
    const {
      model,
      prompt,
      size: _size,
      seconds: _s,
      fps: _f,
      num_frames: _n,
      seed: _seed,
      ...settings
    } = payload;
    let decoded: EffectiveRequest['image'];
    if (image) {
      const size = await decodeImage(image);
      if (!size) throw sglangError(400, 'Failed to process image source: cannot identify image file');
      decoded = { ...size, type: image.type };
    }
    return {
      fields,
      effective: {
        model: typeof model === 'string' ? model : 'sora-2',
        prompt: String(prompt),
        ...frame,
        fps,
        frames,
        seed,
        settings,
        image: decoded,
      },
    };
  }

  async #vllmRequest(
    parsed: ParsedBody,
  ): Promise<{ effective: EffectiveRequest; fields: Record<string, unknown> }> {
    // FastAPI: a form value that is an empty string counts as absent; a JSON body parses as an empty form.
    const form = Object.fromEntries(Object.entries(parsed.fields).filter(([, value]) => value !== ''));
    const fields: Record<string, unknown> = { ...form };
    const validation = (name: string, message: string): Refusal =>
      vllmError(
        400,
        `1 validation error:\n  {'loc': ('body', '${name}'), 'msg': '${message}'}`,
        `body.${name}`,
      );
    if (form.prompt === undefined) throw validation('prompt', 'Field required');
    if (form.input_reference !== undefined)
      throw validation('input_reference', `Expected UploadFile, received: ${typeof form.input_reference}`);
    if (form.size !== undefined && !/^\d+x\d+$/.test(form.size))
      throw validation('size', "String should match pattern '^\\d+x\\d+$'");
    if (form.seconds !== undefined && !/^[1-9]\d*$/.test(form.seconds))
      throw validation('seconds', "String should match pattern '^[1-9]\\d*$'");
    const values: Record<string, unknown> = {};
    for (const [name, spec] of Object.entries(VLLM_FIELDS)) {
      const text = form[name];
      if (text === undefined) continue;
      let value: unknown = text;
      if (spec.kind === 'int') {
        if (!/^[-+]?\d+$/.test(text.trim())) throw validation(name, 'Input should be a valid integer');
        value = Number(text);
      } else if (spec.kind === 'float') {
        if (text.trim() === '' || Number.isNaN(Number(text)))
          throw validation(name, 'Input should be a valid number');
        value = Number(text);
      } else if (spec.kind === 'bool') {
        const lower = text.toLowerCase();
        if (!['true', 'false', '1', '0', 'yes', 'no', 'on', 'off', 't', 'f', 'y', 'n'].includes(lower)) {
          throw validation(name, 'Input should be a valid boolean');
        }
        value = ['true', '1', 'yes', 'on', 't', 'y'].includes(lower);
      } else if (spec.kind === 'json') {
        try {
          value = JSON.parse(text);
        } catch {
          throw vllmError(400, 'Invalid JSON in form field.');
        }
        if (
          (name === 'lora' || name === 'extra_params') &&
          (typeof value !== 'object' || value === null || Array.isArray(value))
        ) {
          throw vllmError(
            400,
            `Invalid JSON in form field: expected dict, got ${Array.isArray(value) ? 'list' : typeof value}.`,
          );
        }
      }
      if (typeof value === 'number') {
        const outside =
          (spec.min !== undefined && value < spec.min) ||
          (spec.max !== undefined && value > spec.max) ||
          (spec.gt !== undefined && value <= spec.gt);
        if (outside)
          throw vllmError(
            400,
            `1 validation error for VideoGenerationRequest\n${name}\n  Input out of range`,
            null,
            'BadRequestError',
          );
      }
      values[name] = value;
    }
    const references = [parsed.files.input_reference, values.image_reference, values.video_reference].filter(
      (r) => r !== undefined,
    );
    if (references.length > 1)
      throw vllmError(400, 'Provide only one of input_reference, image_reference, or video_reference.');
    if (form.model !== undefined && form.model !== this.servedModel) {
      throw vllmError(
        400,
        `Model mismatch: request specifies '${form.model}' but server is running '${this.servedModel}'.`,
      );
    }
    let image: EffectiveRequest['image'];
    const upload = parsed.files.input_reference;
    if (upload) {
      const decoded = await decodeImage(upload);
      if (!decoded)
        throw vllmError(400, 'Invalid input_reference: provided content is not a valid image or video.');
      image = { ...decoded, type: upload.type };
    }
    const size = form.size ? (parseWxH(form.size) as { width: number; height: number }) : undefined;
    const width = size?.width ?? (values.width as number | undefined) ?? 1280;
    const height = size?.height ?? (values.height as number | undefined) ?? 720;
    const fps = (values.fps as number | undefined) ?? WAN_FPS;
    const frames =
      (values.num_frames as number | undefined) ??
      (form.seconds === undefined
        ? WAN_FRAMES
        : Number(form.seconds) * ((values.fps as number | undefined) ?? 24));
    const { seed, width: _w, height: _h, num_frames: _n, fps: _f, ...settings } = values;
    return {
      fields,
      effective: {
        model: this.servedModel,
        prompt: form.prompt,
        width,
        height,
        fps,
        frames,
        seed: seed as number | undefined,
        settings,
        image,
      },
    };
  }

  /** Each poll moves the video one step on: queued, in progress (where the server has it), then its outcome. */
  async #poll(job: Job): Promise<{ body: unknown }> {
    const object = job.object;
    if (!job.cancelled && !['completed', 'failed'].includes(String(object.status))) {
      job.polls++;
      const done = this.outcome !== 'never-finish' && job.polls >= this.pollsToFinish;
      if (done && this.outcome === 'fail') {
        object.status = 'failed';
        object.error =
          this.kind === 'vllm-omni'
            ? { code: 500, message: 'CUDA out of memory' }
            : { code: 'internal_error', message: 'CUDA out of memory' };
        if (this.kind === 'sglang') object.error = { message: 'CUDA out of memory' };
      } else if (done) {
        job.file = await this.#makeVideo(job.effective);
        Object.assign(object, {
          status: 'completed',
          progress: 100,
          completed_at: Math.floor(Date.now() / 1000),
        });
        if (this.kind === 'vllm-omni') object.file_name = `${job.id}.mp4`;
      } else if (this.kind !== 'sglang') {
        // SGLang has no in_progress and reports no progress until the end.
        object.status = 'in_progress';
        if (this.kind === 'openai')
          object.progress = Math.min(99, Math.round((100 * job.polls) / this.pollsToFinish));
      }
    }
    if (this.kind === 'vllm-omni' && object.status === 'failed') {
      const code = (object.error as { code: number }).code;
      throw new Refusal(code >= 400 && code <= 599 ? code : 500, object);
    }
    return { body: object };
  }

  async #content(job: Job, url: URL): Promise<string> {
    const status = String(job.object.status);
    if (this.kind === 'openai') {
      const variant = url.searchParams.get('variant') ?? 'video';
      if (!['video', 'thumbnail', 'spritesheet'].includes(variant)) {
        throw openAiError(
          400,
          `Invalid value: '${variant}'. Supported values are: 'video', 'thumbnail', and 'spritesheet'.`,
          'variant',
          'invalid_value',
        );
      }
      if (status !== 'completed') throw openAiError(400, 'Video is not ready yet.', null, null);
    } else if (this.kind === 'vllm-omni' && status === 'failed') {
      throw vllmError(422, 'Video generation failed. Check job status for error details.');
    }
    if (!job.file) {
      throw this.kind === 'vllm-omni'
        ? vllmError(404, 'Generation is still in-progress')
        : sglangError(404, 'Generation is still in-progress');
    }
    return job.file;
  }

  #delete(job: Job): unknown {
    const status = String(job.object.status);
    const running = !['completed', 'failed'].includes(status);
    if (this.kind === 'openai') {
      if (running) throw openAiError(400, 'Only completed or failed videos can be deleted.', null, null);
      this.#jobs.delete(job.id);
      this.deletes.push({ id: job.id, stopped: false });
      return { id: job.id, object: 'video.deleted', deleted: true };
    }
    if (this.kind === 'sglang') {
      // "TODO: support aborting a job": the job is forgotten, and the GPU goes on making it.
      this.#jobs.delete(job.id);
      this.deletes.push({ id: job.id, stopped: false });
      return { ...job.object, status: 'deleted' };
    }
    if (running && this.slowCancel) {
      this.slowCancel = false;
      throw vllmError(409, 'Cancellation in progress. Please try again later.');
    }
    job.cancelled = running;
    this.#jobs.delete(job.id);
    this.deletes.push({ id: job.id, stopped: running });
    return { id: job.id, deleted: true, object: 'video.deleted' };
  }

  /**
   * An MP4 of the effective shape, made once per shape and picture: a flat colour unless the options ask for the
   * test pattern, since no test looks at the picture and a moving pattern costs the engine's conforming several
   * times as much at 1080p.
   */
  #makeVideo({ width, height, fps, frames }: EffectiveRequest): Promise<string> {
    const picture = this.#options.picture ?? { colour: '0x3070b0' };
    const tone = { frequency: 392, sampleRate: 48_000, channels: 2 as const };
    return fakeVideoFile(this.#options.cacheDir, {
      width,
      height,
      fps,
      frames,
      picture,
      ...(this.kind === 'openai' && { tone }),
    });
  }
}

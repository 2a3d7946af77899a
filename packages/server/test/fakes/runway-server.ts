/**
 * A strict fake of Runway's API (https://api.dev.runwayml.com), written from:
 *
 * - [R-SPEC] Runway's OpenAPI (runwayml/openapi `openapi.json`, mirrored at tryAGI/Runway
 *   `src/libs/Runway/openapi.json` @ 042b2cad705aa90c923ef11ecf07a47f57871f01, 2026-08-08): the `model` unions of
 *   `POST /v1/image_to_video` and `/v1/text_to_video` (required fields, enums, ranges, `promptImage` forms and
 *   positions, `data:` URI lengths), the task union of `GET /v1/tasks/{id}`, `DELETE /v1/tasks/{id}` (204),
 *   `GET /v1/organization`, the `X-Runway-Version` header (`const: "2024-11-06"`, required), bearer auth, and
 *   the error bodies (400 `{error, issues?, docUrl?}`, 429 `{error}`).
 * - [R-NODE] runwayml/sdk-node @ ecb7e33b9c94 (`src/client.ts`: the version header on every request;
 *   `src/resources/tasks.ts`: "Tasks that are running, pending, or throttled can be canceled … other tasks
 *   will be deleted", a deleted task is not found again).
 * - Runway's docs: [R-DOC-ERRORS] https://docs.dev.runwayml.com/errors/errors (401 bad key, 502/503 shedding
 *   load, 405), [R-DOC-FAILURES] https://docs.dev.runwayml.com/errors/task-failures/ (`failureCode`s),
 *   [R-DOC-INPUTS] https://docs.dev.runwayml.com/assets/inputs/ (HTTPS only, domain hosts, data URI limits),
 *   [R-DOC-TIERS] https://docs.dev.runwayml.com/usage/tiers (THROTTLED; 429 once the daily quota is spent).
 * - Observed answers quoted in the research note (/tmp/research/runway-fal-replicate.md §A): the wrong-version
 *   400 text, `Validation of body failed` with Zod v4 issues, 404 `Could not find Task` after a DELETE.
 *
 * Where the sources are silent the fake chooses, and says so beside the rule: the 401 body, the text for a
 * missing version header, 24 fps output, the default duration when none is sent, how many polls a task takes.
 * It is stricter than Runway in one place on purpose: it refuses unknown fields on every model's body, where
 * Runway's spec marks only the seedance branches (and `contentModeration`, and reference items) as closed and
 * most likely strips unknown fields from gen4.5, gen4_turbo and veo3.1 silently. A client that sends only
 * what the spec names passes both. It does not check reference durations (Runway: at most 15 s of video and
 * of audio in all), which needs the media decoded.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { LoopbackServer, readBody, sendJson, sendVideoFile } from './fake-http.js';
import { fakeVideoFile } from './fake-video-file.js';

const API_VERSION = '2024-11-06';
const DOC_URL = 'https://docs.dev.runwayml.com/api';
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$/;
/** The fake's choice: Runway does not document its output frame rate. */
const OUTPUT_FPS = 24;

type IssuePath = readonly (string | number)[];

interface Issue {
  readonly code: string;
  readonly path: IssuePath;
  readonly message: string;
  readonly [detail: string]: unknown;
}

type Check = (value: unknown, path: IssuePath) => Issue[];

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function invalidType(expected: string, value: unknown, path: IssuePath): Issue {
  return {
    expected,
    code: 'invalid_type',
    path,
    message: `Invalid input: expected ${expected}, received ${kindOf(value)}`,
  };
}

function text(min: number, max: number): Check {
  return (value, path) => {
    if (typeof value !== 'string') return [invalidType('string', value, path)];
    if (value.length < min) {
      return [
        {
          origin: 'string',
          code: 'too_small',
          minimum: min,
          path,
          message: `Too small: expected string to have >=${min} characters`,
        },
      ];
    }
    if (value.length > max) {
      return [
        {
          origin: 'string',
          code: 'too_big',
          maximum: max,
          path,
          message: `Too big: expected string to have <=${max} characters`,
        },
      ];
    }
    return [];
  };
}

function oneOf(values: readonly (string | number)[]): Check {
  return (value, path) =>
    values.includes(value as string | number)
      ? []
      : [
          {
            code: 'invalid_value',
            values,
            path,
            message: `Invalid option: expected one of ${values.map((v) => JSON.stringify(v)).join('|')}`,
          },
        ];
}

function integer(min: number, max: number): Check {
  return (value, path) => {
    if (typeof value !== 'number') return [invalidType('number', value, path)];
    if (!Number.isInteger(value)) return [invalidType('int', value, path)];
    if (value < min)
      return [
        {
          origin: 'number',
          code: 'too_small',
          minimum: min,
          path,
          message: `Too small: expected number to be >=${min}`,
        },
      ];
    if (value > max)
      return [
        {
          origin: 'number',
          code: 'too_big',
          maximum: max,
          path,
          message: `Too big: expected number to be <=${max}`,
        },
      ];
    return [];
  };
}

const boolean: Check = (value, path) =>
  typeof value === 'boolean' ? [] : [invalidType('boolean', value, path)];

function object(fields: Readonly<Record<string, Check>>, required: readonly string[]): Check {
  return (value, path) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      return [invalidType('object', value, path)];
    const record = value as Record<string, unknown>;
    const issues: Issue[] = [];
    for (const [name, check] of Object.entries(fields)) {
      if (record[name] === undefined) {
        if (required.includes(name)) issues.push(...check(undefined, [...path, name]));
      } else {
        issues.push(...check(record[name], [...path, name]));
      }
    }
    // Unknown fields are refused everywhere (see the header: stricter than Runway on some models).
    const unknown = Object.keys(record).filter((name) => !(name in fields));
    if (unknown.length > 0) {
      issues.push({
        code: 'unrecognized_keys',
        keys: unknown,
        path,
        message: `Unrecognized key${unknown.length > 1 ? 's' : ''}: ${unknown.map((k) => `"${k}"`).join(', ')}`,
      });
    }
    return issues;
  };
}

function array(item: Check, min: number, max: number): Check {
  return (value, path) => {
    if (!Array.isArray(value)) return [invalidType('array', value, path)];
    if (value.length < min)
      return [
        {
          origin: 'array',
          code: 'too_small',
          minimum: min,
          path,
          message: `Too small: expected array to have >=${min} items`,
        },
      ];
    if (value.length > max)
      return [
        {
          origin: 'array',
          code: 'too_big',
          maximum: max,
          path,
          message: `Too big: expected array to have <=${max} items`,
        },
      ];
    return value.flatMap((entry, index) => item(entry, [...path, index]));
  };
}

/** [R-SPEC] `maxLength` of each kind's `data:` URI (5 MB for images, 16 MB for video and audio: [R-DOC-INPUTS]). */
const DATA_URI_MAX = { image: 5_242_880, video: 16_777_216, audio: 16_777_216 } as const;
type MediaKind = keyof typeof DATA_URI_MAX;
const DATA_URI = /^data:([a-z]+)\/[a-z0-9.+-]+;base64,([A-Za-z0-9+/]*={0,2})$/;

/** [R-SPEC] a media input: `https://` (13–2048), `runway://` (13–5000) or `data:<kind>/` (13–the kind's limit). */
function mediaUri(kind: MediaKind): Check {
  return (value, path) => {
    if (typeof value !== 'string') return [invalidType('string', value, path)];
    if (value.startsWith('data:')) {
      if (value.length > DATA_URI_MAX[kind]) {
        return [
          {
            origin: 'string',
            code: 'too_big',
            maximum: DATA_URI_MAX[kind],
            path,
            message: `Too big: expected string to have <=${DATA_URI_MAX[kind]} characters`,
          },
        ];
      }
      const match = DATA_URI.exec(value);
      // [R-DOC-TROUBLE] "Invalid data URI": a data URI must carry its content type and base64 bytes.
      if (match?.[1] !== kind || (match[2] ?? '').length === 0) {
        return [{ code: 'custom', path, message: `Invalid data URI: expected a base64 data:${kind}/… URI` }];
      }
      return [];
    }
    if (value.startsWith('runway://')) return text(13, 5000)(value, path);
    if (value.startsWith('https://')) {
      const problem = text(13, 2048)(value, path);
      if (problem.length > 0) return problem;
      // [R-DOC-INPUTS] "URLs must be hosted on a domain".
      const host = new URL(value).hostname.replace(/^\[|\]$/g, '');
      return isIP(host) ? [{ code: 'custom', path, message: 'URLs must be hosted on a domain' }] : [];
    }
    // [R-DOC-INPUTS] "Only HTTPS URLs are allowed".
    return [
      {
        code: 'invalid_union',
        errors: [],
        path,
        message: 'Invalid input: expected an HTTPS URL, a runway:// URI or a data URI',
      },
    ];
  };
}

type FramePositions = 'first' | 'first-last' | 'keyframes-or-references';

/**
 * [R-SPEC] `promptImage`: a string (the first frame), or positioned images. gen4.5 and gen4_turbo: one item,
 * `first` only. veo3.1: one or two, `first`/`last`, no two alike, "does not support generating with only a last
 * frame". seedance2: `first`/`last` keyframes, or items without a position as references, "The two modes cannot
 * be mixed".
 */
function promptImage(positions: FramePositions): Check {
  const position = positions === 'first' ? oneOf(['first']) : oneOf(['first', 'last']);
  const item = object(
    { uri: mediaUri('image'), position },
    positions === 'keyframes-or-references' ? ['uri'] : ['uri', 'position'],
  );
  const max = positions === 'first' ? 1 : positions === 'first-last' ? 2 : Number.POSITIVE_INFINITY;
  return (value, path) => {
    if (typeof value === 'string') return mediaUri('image')(value, path);
    const issues = array(item, 1, max)(value, path);
    if (issues.length > 0) return issues;
    const given = (value as { position?: string }[]).map((image) => image.position);
    if (
      positions === 'keyframes-or-references' &&
      given.some((p) => p === undefined) &&
      given.some((p) => p !== undefined)
    ) {
      return [
        {
          code: 'custom',
          path,
          message: 'Keyframe images (first/last) and reference images cannot be mixed.',
        },
      ];
    }
    const positioned = given.filter((p) => p !== undefined);
    if (new Set(positioned).size < positioned.length) {
      return [
        { code: 'custom', path, message: 'No two provided images may have the same `position` value.' },
      ];
    }
    if (positions === 'first-last' && !given.includes('first')) {
      return [
        { code: 'custom', path, message: 'This model does not support generating with only a last frame.' },
      ];
    }
    return [];
  };
}

const seed = integer(0, 4_294_967_295);
const contentModeration = object({ publicFigureThreshold: oneOf(['auto', 'low']) }, []);
const outputFormat = oneOf(['mp4', 'prores', 'png_sequence']);
const proresProfile = oneOf(['422', '4444', '422 Proxy', '422 LT', '422 HQ', '4444 XQ']);
const references = (max: number) => array(object({ uri: mediaUri('image') }, ['uri']), 0, max);
const typedReferences = (kind: 'video' | 'audio', max: number) =>
  array(object({ type: oneOf([kind]), uri: mediaUri(kind) }, ['type', 'uri']), 0, max);

const GEN4_I2V_RATIOS = ['1280:720', '720:1280', '1104:832', '960:960', '832:1104', '1584:672'];
const VEO_RATIOS = ['1280:720', '720:1280', '1080:1920', '1920:1080'];
const SEEDANCE_FAST_RATIOS = [
  '992:432',
  '864:496',
  '752:560',
  '640:640',
  '560:752',
  '496:864',
  '1470:630',
  '1280:720',
  '1112:834',
  '960:960',
  '834:1112',
  '720:1280',
];
const SEEDANCE_RATIOS = [
  ...SEEDANCE_FAST_RATIOS,
  '2206:946',
  '1920:1080',
  '1664:1248',
  '1440:1440',
  '1248:1664',
  '1080:1920',
  '3840:1646',
  '3840:2160',
  '3840:2880',
  '3840:3840',
  '2880:3840',
  '2160:3840',
];
const SEEDANCE_2_5_RATIOS = [
  '992:432',
  '854:480',
  '752:560',
  '640:640',
  '560:752',
  '480:854',
  '1470:630',
  '1280:720',
  '1112:834',
  '960:960',
  '834:1112',
  '720:1280',
];

interface Branch {
  readonly fields: Readonly<Record<string, Check>>;
  readonly required: readonly string[];
  /** What the model makes: sound unless `audio: false` (veo3.1, seedance: `default: true`). */
  readonly makesSound: boolean;
  /** The fake's choice where the spec gives no default duration. */
  readonly defaultDuration: number;
}

function veo(image: boolean): Branch {
  return {
    fields: {
      promptText: text(1, 1000),
      ...(image ? { promptImage: promptImage('first-last') } : {}),
      ratio: oneOf(VEO_RATIOS),
      audio: boolean,
      negativePrompt: text(1, 1000),
      duration: oneOf([4, 6, 8]),
    },
    required: image ? ['promptImage', 'ratio'] : ['promptText', 'ratio'],
    makesSound: true,
    defaultDuration: 8,
  };
}

function seedance(image: boolean, ratios: readonly string[], variant: '2' | '2_5'): Branch {
  const many = variant === '2_5';
  return {
    fields: {
      promptText: text(1, many ? 15_000 : 3500),
      ...(image ? { promptImage: promptImage('keyframes-or-references') } : {}),
      audio: boolean,
      duration: integer(4, many ? 30 : 15),
      ratio: oneOf(ratios),
      ...(image
        ? {}
        : {
            references: references(many ? 30 : 9),
            referenceVideos: typedReferences('video', many ? 10 : 3),
          }),
      referenceAudio: typedReferences('audio', many ? 10 : 3),
    },
    required: image ? ['promptImage'] : many ? [] : ['promptText'],
    makesSound: true,
    defaultDuration: 5,
  };
}

/** [R-SPEC] the branches of each create endpoint's union on `model` (spec of 2026-08-08). */
const BRANCHES: Readonly<
  Record<'/v1/image_to_video' | '/v1/text_to_video', Readonly<Record<string, Branch>>>
> = {
  '/v1/image_to_video': {
    'gen4.5': {
      fields: {
        promptText: text(1, 1000),
        promptImage: promptImage('first'),
        seed,
        ratio: oneOf(GEN4_I2V_RATIOS),
        duration: integer(2, 10),
        contentModeration,
        outputFormat,
        proresProfile,
      },
      required: ['promptText', 'promptImage', 'ratio', 'duration'],
      makesSound: false,
      defaultDuration: 5,
    },
    gen4_turbo: {
      fields: {
        promptText: text(1, 1000),
        promptImage: promptImage('first'),
        seed,
        ratio: oneOf(['1280:720', '720:1280', '1104:832', '832:1104', '960:960', '1584:672']),
        duration: integer(2, 10),
        contentModeration,
      },
      required: ['promptImage', 'ratio'],
      makesSound: false,
      defaultDuration: 5,
    },
    'veo3.1': veo(true),
    'veo3.1_fast': veo(true),
    seedance2: seedance(true, SEEDANCE_RATIOS, '2'),
    seedance2_fast: seedance(true, SEEDANCE_FAST_RATIOS, '2'),
    seedance2_mini: seedance(true, SEEDANCE_FAST_RATIOS, '2'),
    seedance2_5: seedance(true, SEEDANCE_2_5_RATIOS, '2_5'),
  },
  // gen4_turbo (and gen3a_turbo) have no text_to_video branch.
  '/v1/text_to_video': {
    'gen4.5': {
      fields: {
        promptText: text(1, 1000),
        ratio: oneOf(['1280:720', '720:1280']),
        duration: integer(2, 10),
        seed,
        contentModeration,
        outputFormat,
        proresProfile,
      },
      required: ['promptText', 'ratio', 'duration'],
      makesSound: false,
      defaultDuration: 5,
    },
    'veo3.1': veo(false),
    'veo3.1_fast': veo(false),
    seedance2: seedance(false, SEEDANCE_RATIOS, '2'),
    seedance2_fast: seedance(false, SEEDANCE_FAST_RATIOS, '2'),
    seedance2_mini: seedance(false, SEEDANCE_FAST_RATIOS, '2'),
    seedance2_5: seedance(false, SEEDANCE_2_5_RATIOS, '2_5'),
  },
};

class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(`HTTP ${status}`);
  }
}

function validationFailed(issues: readonly Issue[]): Refusal {
  return new Refusal(400, { error: 'Validation of body failed', issues, docUrl: DOC_URL });
}

export type RunwayOutcome =
  | { readonly kind: 'succeed' }
  | { readonly kind: 'fail'; readonly failure: string; readonly failureCode?: string }
  | { readonly kind: 'never-finish' };

export interface RecordedCreate {
  readonly path: string;
  readonly body: Readonly<Record<string, unknown>>;
}

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly authorization: string | undefined;
  readonly version: string | undefined;
  readonly status: number;
}

/** What a task makes: its output's shape. */
interface OutputShape {
  readonly width: number;
  readonly height: number;
  readonly seconds: number;
  readonly sound: boolean;
}

type TaskStatus = 'PENDING' | 'THROTTLED' | 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'CANCELLED';

interface Task {
  readonly id: string;
  readonly createdAt: string;
  readonly shape: OutputShape;
  readonly outcome: RunwayOutcome;
  readonly credits: number;
  polls: number;
  status: TaskStatus;
  progress: number;
  /** The signed link's token, once the video is made. */
  token?: string;
  file?: string;
}

export interface FakeRunwayOptions {
  /** The key it takes (`Authorization: Bearer <key>`). */
  readonly apiKey: string;
  /** Where made videos are kept by shape, to copy for the next task of the same shape. */
  readonly cacheDir: string;
}

export class FakeRunwayServer {
  readonly creates: RecordedCreate[] = [];
  readonly requests: RecordedRequest[] = [];
  /** Tasks cancelled while pending, throttled or running ([R-SPEC] DELETE). */
  readonly cancelled: string[] = [];
  /** The Authorization header of each download of a result (the CDN link needs none). */
  readonly downloads: (string | undefined)[] = [];
  /** How the next tasks end. */
  outcome: RunwayOutcome = { kind: 'succeed' };
  /** Each poll moves a task one step: PENDING, THROTTLED, then RUNNING at each of these, then its end. */
  runningProgress: readonly number[] = [0.25, 0.6];
  /** Answers to the next create requests before they are read: 502/503 "shedding load", 429 ([R-DOC-ERRORS]). */
  readonly busyCreates: { readonly status: number; readonly headers?: Record<string, string> }[] = [];
  /** The same for the next task polls. */
  readonly busyPolls: { readonly status: number }[] = [];
  /** Tasks the organisation may still create today; 429 after that ([R-DOC-TIERS]). */
  dailyGenerations = Number.POSITIVE_INFINITY;
  readonly #options: FakeRunwayOptions;
  readonly #http: LoopbackServer;
  readonly #tasks = new Map<string, Task>();

  private constructor(options: FakeRunwayOptions) {
    this.#options = options;
    this.#http = new LoopbackServer((req, res) => this.#handle(req, res));
  }

  static async start(options: FakeRunwayOptions): Promise<FakeRunwayServer> {
    const fake = new FakeRunwayServer(options);
    await fake.#http.listen();
    return fake;
  }

  get url(): string {
    return this.#http.url;
  }

  /** Tasks still pending, throttled or running. */
  get unfinished(): string[] {
    return [...this.#tasks.values()]
      .filter((task) => ['PENDING', 'THROTTLED', 'RUNNING'].includes(task.status))
      .map((task) => task.id);
  }

  close(): Promise<void> {
    return this.#http.close();
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const method = req.method ?? 'GET';
    let status = 200;
    let body: unknown;
    let headers: Readonly<Record<string, string>> = {};
    try {
      const raw = await readBody(req);
      if (url.pathname.startsWith('/cdn/')) {
        await this.#download(req, url, res);
        return;
      }
      this.#authenticate(req);
      ({ status, body } = await this.#route(req, method, url.pathname, raw));
    } catch (error) {
      if (!(error instanceof Refusal)) {
        status = 500;
        body = { error: `Internal Server Error: ${String(error)}` };
      } else {
        status = error.status;
        body = error.body;
        headers = error.headers;
      }
    }
    const version = req.headers['x-runway-version'];
    this.requests.push({
      method,
      path: url.pathname,
      authorization: req.headers.authorization,
      version: typeof version === 'string' ? version : undefined,
      status,
    });
    if (status === 204) {
      res.writeHead(204, headers);
      res.end();
      return;
    }
    sendJson(res, status, body, { 'content-type': 'application/json; charset=utf-8', ...headers });
  }

  /**
   * [R-SPEC] bearer auth and a required `X-Runway-Version` whose only value is 2024-11-06. The 401 body and the
   * order of the two checks are the fake's choice (no capture shows them); the wrong-version text is observed.
   */
  #authenticate(req: IncomingMessage): void {
    if (req.headers.authorization !== `Bearer ${this.#options.apiKey}`) {
      throw new Refusal(401, { error: 'Invalid API key. Check that the key is valid and not disabled.' });
    }
    const version = req.headers['x-runway-version'];
    if (version === undefined) {
      throw new Refusal(400, { error: 'The X-Runway-Version header is required.', docUrl: DOC_URL });
    }
    if (version !== API_VERSION) {
      throw new Refusal(400, {
        error: 'The API version that was provided in the X-Runway-Version header is not valid.',
        docUrl: DOC_URL,
      });
    }
  }

  async #route(
    req: IncomingMessage,
    method: string,
    path: string,
    raw: Buffer,
  ): Promise<{ status: number; body?: unknown }> {
    if (path === '/v1/image_to_video' || path === '/v1/text_to_video') {
      if (method !== 'POST') throw methodNotAllowed();
      const busy = this.busyCreates.shift();
      if (busy)
        throw new Refusal(
          busy.status,
          { error: 'The service is shedding load. Try again later.' },
          busy.headers,
        );
      return { status: 200, body: await this.#create(req, path, raw) };
    }
    if (path === '/v1/organization') {
      if (method !== 'GET') throw methodNotAllowed();
      return { status: 200, body: this.#organization() };
    }
    const match = /^\/v1\/tasks\/([^/]+)$/.exec(path);
    if (!match) throw new Refusal(404, { error: 'Not found' });
    const id = decodeURIComponent(match[1] ?? '');
    // The path's `pattern` is a uuid v4 ([R-SPEC]); the status for another id is an inference.
    if (!UUID.test(id)) {
      throw new Refusal(400, {
        error: 'Validation of path failed',
        issues: [{ code: 'invalid_format', format: 'uuid', path: ['id'], message: 'Invalid UUID' }],
        docUrl: DOC_URL,
      });
    }
    const task = this.#tasks.get(id);
    if (method === 'GET') {
      const busy = this.busyPolls.shift();
      if (busy) throw new Refusal(busy.status, { error: 'The service is shedding load. Try again later.' });
      if (!task) throw new Refusal(404, { error: 'Could not find Task' });
      return { status: 200, body: await this.#poll(task) };
    }
    if (method === 'DELETE') {
      if (!task) throw new Refusal(404, { error: 'Could not find Task' });
      // Running, pending or throttled: cancelled; otherwise deleted. Either way not found again ([R-NODE]).
      if (['PENDING', 'THROTTLED', 'RUNNING'].includes(task.status)) this.cancelled.push(task.id);
      this.#tasks.delete(task.id);
      return { status: 204 };
    }
    throw methodNotAllowed();
  }

  async #create(
    req: IncomingMessage,
    path: '/v1/image_to_video' | '/v1/text_to_video',
    raw: Buffer,
  ): Promise<unknown> {
    const contentType = req.headers['content-type'] ?? '';
    let body: unknown;
    if (contentType.toLowerCase().startsWith('application/json')) {
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        throw new Refusal(400, { error: 'The request body is not valid JSON.', docUrl: DOC_URL });
      }
    }
    // Without a JSON content type the body is not read: Zod sees `undefined`.
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw validationFailed([invalidType('object', body, [])]);
    }
    const record = body as Record<string, unknown>;
    const branch = typeof record.model === 'string' ? BRANCHES[path][record.model] : undefined;
    if (!branch) {
      const issues: Issue[] =
        typeof record.model === 'string' ? [] : [invalidType('string', record.model, ['model'])];
      issues.push({
        code: 'invalid_union',
        errors: [],
        note: 'No matching discriminator',
        discriminator: 'model',
        path: ['model'],
        message: 'Invalid input',
      });
      throw validationFailed(issues);
    }
    const issues = object({ ...branch.fields, model: oneOf([record.model as string]) }, [
      ...branch.required,
      'model',
    ])(record, []);
    if (issues.length > 0) throw validationFailed(issues);
    if (this.dailyGenerations <= 0) {
      throw new Refusal(429, {
        error: 'You have exceeded the maximum number of generations for this model in the last 24 hours.',
      });
    }
    this.dailyGenerations--;
    this.creates.push({ path, body: record });
    const [width, height] = String(record.ratio ?? '1280:720')
      .split(':')
      .map(Number) as [number, number];
    const seconds = typeof record.duration === 'number' ? record.duration : branch.defaultDuration;
    const task: Task = {
      id: randomUUID(),
      createdAt: new Date().toISOString(),
      shape: { width, height, seconds, sound: branch.makesSound && record.audio !== false },
      outcome: this.outcome,
      credits: seconds * 12,
      polls: 0,
      status: 'PENDING',
      progress: 0,
    };
    this.#tasks.set(task.id, task);
    return { id: task.id, estimatedCost: { credits: task.credits } };
  }

  /** Moves the task one step and answers its state, in the shape of [R-SPEC]'s task union. */
  async #poll(task: Task): Promise<unknown> {
    task.polls++;
    const steps = this.runningProgress.length;
    if (task.polls === 1) task.status = 'PENDING';
    else if (task.polls === 2) task.status = 'THROTTLED';
    else if (task.polls <= 2 + steps || task.outcome.kind === 'never-finish') {
      task.status = 'RUNNING';
      task.progress = this.runningProgress[Math.min(task.polls - 3, steps - 1)] ?? 0;
    } else if (task.outcome.kind === 'fail') {
      task.status = 'FAILED';
    } else {
      task.file ??= await this.#makeVideo(task.shape);
      task.token ??= randomBytes(12).toString('hex');
      task.status = 'SUCCEEDED';
    }
    const base = { id: task.id, createdAt: task.createdAt, status: task.status };
    switch (task.status) {
      case 'RUNNING':
        return { ...base, progress: task.progress, estimatedCost: { credits: task.credits } };
      case 'SUCCEEDED':
        return {
          ...base,
          output: [`${this.url}/cdn/${task.id}.mp4?_jwt=${task.token}`],
          cost: { credits: task.credits },
        };
      case 'FAILED': {
        const outcome = task.outcome as Extract<RunwayOutcome, { kind: 'fail' }>;
        return {
          ...base,
          failure: outcome.failure,
          ...(outcome.failureCode ? { failureCode: outcome.failureCode } : {}),
          cost: { credits: 0 },
        };
      }
      default:
        return { ...base, estimatedCost: { credits: task.credits } };
    }
  }

  /** The signed CDN link of a succeeded task's output: no key needed, the token must match. */
  async #download(req: IncomingMessage, url: URL, res: ServerResponse): Promise<void> {
    this.downloads.push(req.headers.authorization);
    const id = /^\/cdn\/([^/]+)\.mp4$/.exec(url.pathname)?.[1] ?? '';
    const task = this.#tasks.get(id);
    if (!task?.file || url.searchParams.get('_jwt') !== task.token) {
      res.writeHead(403, { 'content-type': 'application/xml' });
      res.end('<Error><Code>AccessDenied</Code></Error>');
      return;
    }
    await sendVideoFile(res, task.file);
  }

  #organization(): unknown {
    const limits = { maxConcurrentGenerations: 2, maxDailyGenerations: 200 };
    return {
      creditBalance: 5000,
      tier: {
        maxMonthlyCreditSpend: 10_000,
        models: { 'gen4.5': limits, gen4_turbo: limits, 'veo3.1': limits },
      },
      usage: { models: { 'gen4.5': { dailyGenerations: 0 } } },
    };
  }

  /** A flat colour (cheap to encode and to conform) in the output's shape at 24 fps, with a tone when the model makes sound; made once per shape. */
  #makeVideo(shape: OutputShape): Promise<string> {
    const { width, height, seconds, sound } = shape;
    return fakeVideoFile(this.#options.cacheDir, {
      width,
      height,
      fps: OUTPUT_FPS,
      seconds,
      picture: { colour: '0x2060a0' },
      tone: sound ? { frequency: 330, sampleRate: 48000, channels: 1 } : undefined,
    });
  }
}

function methodNotAllowed(): Refusal {
  return new Refusal(405, { error: 'Method not allowed' });
}

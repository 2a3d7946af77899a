/**
 * A strict fake of Google's Veo models through the Gemini API (generativelanguage.googleapis.com, v1beta; not
 * Vertex AI), written from these sources (gathered in the research note for the `gemini` engine):
 *
 * - [proto] googleapis/googleapis `google/ai/generativelanguage/v1beta/prediction_service.proto`
 *   @ c76b74072342c43b0094ef12acf2d2f2e25d9a99 (PredictLongRunningRequest with free-form `instances` and
 *   `parameters`, PredictLongRunningResponse, GenerateVideoResponse, an empty metadata message) and
 *   `generativelanguage_v1beta.yaml` @ 41f615cc6b5223bba80f1684f2598f444a4da842 (GetOperation on
 *   `models/{model}/operations/{id}`; CancelOperation and DeleteOperation bound to batches only: Veo has no
 *   cancel).
 * - [sdk] googleapis/python-genai @ 66807187f2123c6676175ac991f4e34eb09200d1 (`models.py`
 *   `_GenerateVideosParameters_to_mldev`, `_GenerateVideosConfig_to_mldev`, `_Image_to_mldev`,
 *   `_VideoGenerationReferenceImage_to_mldev`; `_api_client.py`: `x-goog-api-key`, redirects followed;
 *   `files.py` `download`: `files/{id}:download?alt=media`) and googleapis/js-genai @ 6e9b35c4.
 * - [docs] ai.google.dev/gemini-api/docs/video ("Generate videos with Veo 3.1 in Gemini API", the copy last
 *   updated 2025-11-05 and a later one): the parameter table per model, 24 fps, 2-day retention, the REST
 *   sample (`curl -L -H "x-goog-api-key: …" "${video_uri}"`).
 * - [live] error texts quoted from the live API in third-party code and issues: n8n-io/n8n#17707 and #17773
 *   ("`durationSeconds` isn't supported by this model…"), hirokidaichi/ergon#11 (out of bound),
 *   googleapis/java-genai#708 ("Your use case is currently not supported…"), discuss.ai.google.dev 181139
 *   (personGeneration), ArcReel/ArcReel#1333 (1080p needs 8 s), DaWe35/image-router#41 (RAI-filtered result),
 *   and captures of the 400 API_KEY_INVALID, 403 unregistered-caller and 404 model-not-found bodies.
 *
 * Rules marked (choice) are where the sources are silent and the fake decides: the text for an invalid
 * aspect ratio, sample count and other unsupported combinations reuses the documented "Your use case is
 * currently not supported" message; a non-JSON content type and a download without `alt=media` are refused;
 * unknown routes answer Google's HTML 404 page; an unknown operation or file answers 404 NOT_FOUND.
 *
 * Each video is a real MP4 (a flat colour) of the shape Veo makes (720p 1280x720 or 720x1280, 1080p 1920x1080 or 1080x1920,
 * 24 fps, `durationSeconds` long, an AAC soundtrack on Veo 3.x, none on Veo 2), made once per shape. Its URI
 * needs the key and answers with a redirect to a stand-in for Google's storage (`/blobs/…` with a token, on
 * this server or under `storageHost`), which needs no key, as a signed URL does not.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadImage } from '@napi-rs/canvas';
import { LoopbackServer, readBody } from './fake-http.js';
import { fakeVideoFile } from './fake-video-file.js';

export type VeoGeneration = '2.0' | '3.0' | '3.1';

/** [docs] model versions; display names as models.list shows them [live]. */
const MODELS: Readonly<Record<string, { generation: VeoGeneration; displayName: string }>> = {
  'veo-3.1-generate-preview': { generation: '3.1', displayName: 'Veo 3.1' },
  'veo-3.1-fast-generate-preview': { generation: '3.1', displayName: 'Veo 3.1 fast' },
  'veo-3.0-generate-001': { generation: '3.0', displayName: 'Veo 3' },
  'veo-3.0-fast-generate-001': { generation: '3.0', displayName: 'Veo 3 fast' },
  'veo-2.0-generate-001': { generation: '2.0', displayName: 'Veo 2' },
};

/** [live] the texts of the live API's refusals. */
const NO_KEY =
  "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.";
const BAD_KEY = 'API key not valid. Please pass a valid API key.';
const USE_CASE =
  'Your use case is currently not supported. Please refer to Gemini API documentation for current model offering.';
const NOT_A_NUMBER = 'The value type for `durationSeconds` needs to be a number';
const notSupported = (key: string): string =>
  `\`${key}\` isn't supported by this model. Please remove it or refer to the Gemini API documentation for supported usage.`;
const outOfBound = (low: number, high: number): string =>
  `The number value for \`durationSeconds\` is out of bound. Please provide a value between ${low} and ${high}, inclusive.`;
const modelNotFound = (model: string): string =>
  `models/${model} is not found for API version v1beta, or is not supported for predictLongRunning. Call ListModels to see the list of available models and their supported methods.`;
/** [live] DaWe35/image-router#41: a filtered result's reason. */
export const RAI_REASON =
  'Veo could not generate 1 videos based on the prompt provided. You will not be charged for this request. Try rephrasing the prompt. If you think this was an error, send feedback. Support codes: 42237218';

/** [docs] "Generated videos are stored on the server for 2 days". */
const RETENTION_MS = 2 * 24 * 3600 * 1000;
const FPS = 24;
const RESPONSE_TYPE = 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse';

export type VeoOutcome =
  | { readonly kind: 'video' }
  /** Done with no samples: Veo's safety filters removed the video. */
  | { readonly kind: 'filtered'; readonly reasons?: readonly string[] }
  /** Done with a google.rpc.Status `error` (a gRPC code). */
  | { readonly kind: 'error'; readonly code: number; readonly message: string }
  | { readonly kind: 'never-finish' };

export type FakeRoute = 'submit' | 'poll' | 'download' | 'model';

/** An error answer the next call to `route` gets instead of its own. */
export interface InjectedFailure {
  readonly route: FakeRoute;
  readonly status: 429 | 500 | 503;
  /** 429: `RetryInfo.retryDelay`, a proto Duration ("0.8s"); left out when undefined. */
  readonly retryDelay?: string;
  /** 429: the `QuotaFailure` violation's quota id and value. */
  readonly quotaId?: string;
  readonly quotaValue?: string;
}

export interface FakeGeminiOptions {
  /** Where made videos are kept by shape. */
  readonly cacheDir: string;
  readonly apiKey: string;
  /** Accept `seed` on Veo 3.x (unverified; refused by default, as the SDKs never send it). */
  readonly acceptSeed?: boolean;
  /**
   * The host name (resolved to this server by the test's dispatcher) that downloads are redirected to, as
   * Google's file service redirects to its storage; default: this server's own address.
   */
  readonly storageHost?: string;
}

/** An image as received, decoded. */
export interface ReceivedImage {
  readonly role: 'image' | 'lastFrame' | 'reference';
  readonly mimeType: string;
  readonly width: number;
  readonly height: number;
  readonly bytes: Buffer;
}

/** What Veo would make of a submit. */
export interface EffectiveRequest {
  readonly generation: VeoGeneration;
  readonly width: number;
  readonly height: number;
  readonly seconds: number;
  readonly audio: boolean;
}

export interface RecordedSubmit {
  readonly model: string;
  readonly contentType: string;
  readonly body: Record<string, unknown>;
  readonly images: readonly ReceivedImage[];
  readonly effective: EffectiveRequest;
}

export interface RecordedRequest {
  readonly method: string;
  /** Path and query, as sent. */
  readonly url: string;
  readonly host: string;
  readonly apiKey: string | undefined;
  readonly status: number;
  readonly at: number;
}

interface Operation {
  readonly name: string;
  readonly effective: EffectiveRequest;
  readonly outcome: VeoOutcome;
  polls: number;
  /** Set once done. */
  answer?: Record<string, unknown>;
}

interface GeneratedFile {
  readonly id: string;
  readonly path: string;
  readonly token: string;
  readonly createdAt: number;
  readonly seconds: number;
}

class GoogleRefusal extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly contentType = 'application/json; charset=UTF-8',
  ) {
    super(`HTTP ${status}`);
  }
}

function googleError(code: number, status: string, message: string, details?: unknown[]): GoogleRefusal {
  return new GoogleRefusal(code, { error: { code, message, status, ...(details && { details }) } });
}

const invalid = (message: string): GoogleRefusal => googleError(400, 'INVALID_ARGUMENT', message);

/** (choice) What Google's front end answers for a route it does not have. */
function noRoute(path: string): GoogleRefusal {
  const page = `<!DOCTYPE html>\n<html lang=en><title>Error 404 (Not Found)!!1</title><p><b>404.</b> <ins>That’s an error.</ins><p>The requested URL <code>${path}</code> was not found on this server.  <ins>That’s all we know.</ins>`;
  return new GoogleRefusal(404, page, 'text/html; charset=UTF-8');
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function onlyKeys(value: Json, allowed: readonly string[]): void {
  for (const key of Object.keys(value)) if (!allowed.includes(key)) throw invalid(notSupported(key));
}

function randomId(): string {
  const letters = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return [...randomBytes(12)].map((byte) => letters[byte % letters.length]).join('');
}

export class FakeGeminiServer {
  readonly submits: RecordedSubmit[] = [];
  readonly requests: RecordedRequest[] = [];
  /** Outcomes of the next submits, in turn; a plain video once they run out. */
  readonly outcomes: VeoOutcome[] = [];
  /** The API names its files on this origin instead of its own (a proxy's view of them). */
  urlOrigin: string | undefined;
  readonly failures: InjectedFailure[] = [];
  /** Polls an operation takes to be done. */
  pollsToFinish = 2;
  /** Model ids that answer 404, as Google answers for a retired model [live]. */
  readonly retiredModels = new Set<string>();
  /** `personGeneration` values refused as this key's region refuses them [live]. */
  readonly refusedPersonGeneration = new Set<string>();
  /** Added to the clock that ages generated files. */
  clockOffsetMs = 0;
  readonly #options: FakeGeminiOptions;
  readonly #http: LoopbackServer;
  readonly #operations = new Map<string, Operation>();
  readonly #files = new Map<string, GeneratedFile>();

  private constructor(options: FakeGeminiOptions) {
    this.#options = options;
    this.#http = new LoopbackServer((req, res) => this.#handle(req, res));
  }

  static async start(options: FakeGeminiOptions): Promise<FakeGeminiServer> {
    const fake = new FakeGeminiServer(options);
    await fake.#http.listen();
    return fake;
  }

  get port(): number {
    return (this.#http.server.address() as AddressInfo).port;
  }

  get url(): string {
    return this.#http.url;
  }

  /** Requests to `path` (a prefix of the path and query). */
  requestsTo(method: string, prefix: string): RecordedRequest[] {
    return this.requests.filter((r) => r.method === method && r.url.startsWith(prefix));
  }

  close(): Promise<void> {
    return this.#http.close();
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const raw = await readBody(req);
    let status = 200;
    let contentType = 'application/json; charset=UTF-8';
    let payload: string | Buffer;
    const headers: Record<string, string> = {};
    try {
      const answer = await this.#route(req, url, raw);
      if ('redirect' in answer) {
        status = 302;
        headers.location = answer.redirect;
        payload = '';
      } else if ('file' in answer) {
        contentType = 'video/mp4';
        payload = await readFile(answer.file);
      } else {
        payload = JSON.stringify(answer.body);
      }
    } catch (error) {
      if (!(error instanceof GoogleRefusal)) {
        status = 500;
        payload = JSON.stringify({
          error: { code: 500, message: 'Internal error encountered.', status: 'INTERNAL' },
        });
      } else {
        status = error.status;
        contentType = error.contentType;
        payload = typeof error.body === 'string' ? error.body : JSON.stringify(error.body);
      }
    }
    const key = req.headers['x-goog-api-key'];
    this.requests.push({
      method: req.method ?? '',
      url: `${url.pathname}${url.search}`,
      host: req.headers.host ?? '',
      apiKey: typeof key === 'string' ? key : undefined,
      status,
      at: Date.now(),
    });
    res.writeHead(status, { 'content-type': contentType, ...headers });
    res.end(payload);
  }

  async #route(
    req: IncomingMessage,
    url: URL,
    raw: Buffer,
  ): Promise<{ body: unknown } | { file: string } | { redirect: string }> {
    const method = req.method ?? 'GET';
    const path = url.pathname;
    const blob = /^\/blobs\/([a-z0-9]+)$/.exec(path);
    if (method === 'GET' && blob) return { file: this.#blob(blob[1] ?? '', url) };
    const submit = /^\/v1beta\/models\/([^/:]+):predictLongRunning$/.exec(path);
    const poll = /^\/v1beta\/models\/([^/:]+)\/operations\/([^/:]+)$/.exec(path);
    const download = /^\/v1beta\/files\/([^/:]+):download$/.exec(path);
    const model = /^\/v1beta\/models\/([^/:]+)$/.exec(path);
    // [proto] no cancel or delete route for operations: `…/operations/{id}:cancel` and DELETE fall through.
    if (method === 'POST' && submit) {
      this.#authenticate(req, url);
      this.#injected('submit');
      const id = submit[1] ?? '';
      this.#knownModel(id);
      return { body: await this.#submit(id, req, raw) };
    }
    if (method === 'GET' && poll) {
      this.#authenticate(req, url);
      this.#injected('poll');
      return { body: await this.#poll(`models/${poll[1]}/operations/${poll[2]}`) };
    }
    if (method === 'GET' && download) {
      this.#authenticate(req, url);
      this.#injected('download');
      return { redirect: this.#download(download[1] ?? '', url) };
    }
    if (method === 'GET' && model) {
      this.#authenticate(req, url);
      this.#injected('model');
      const id = model[1] ?? '';
      const known = this.#knownModel(id);
      return {
        body: {
          name: `models/${id}`,
          version: known.generation,
          displayName: known.displayName,
          description: known.displayName,
          inputTokenLimit: 480,
          outputTokenLimit: 8192,
          supportedGenerationMethods: ['predictLongRunning'],
        },
      };
    }
    throw noRoute(path);
  }

  /** [live] no key: 403 PERMISSION_DENIED; a wrong one: 400 INVALID_ARGUMENT with ErrorInfo API_KEY_INVALID. */
  #authenticate(req: IncomingMessage, url: URL): void {
    const header = req.headers['x-goog-api-key'];
    const key = (typeof header === 'string' ? header : undefined) || url.searchParams.get('key') || '';
    if (!key) throw googleError(403, 'PERMISSION_DENIED', NO_KEY);
    if (key !== this.#options.apiKey) {
      throw googleError(400, 'INVALID_ARGUMENT', BAD_KEY, [
        {
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: 'API_KEY_INVALID',
          domain: 'googleapis.com',
          metadata: { service: 'generativelanguage.googleapis.com' },
        },
        { '@type': 'type.googleapis.com/google.rpc.LocalizedMessage', locale: 'en-US', message: BAD_KEY },
      ]);
    }
  }

  #injected(route: FakeRoute): void {
    const index = this.failures.findIndex((failure) => failure.route === route);
    if (index < 0) return;
    const [failure] = this.failures.splice(index, 1) as [InjectedFailure];
    if (failure.status === 500) throw googleError(500, 'INTERNAL', 'Internal error encountered.');
    if (failure.status === 503) {
      throw googleError(503, 'UNAVAILABLE', 'The model is overloaded. Please try again later.');
    }
    // [live] the 429 envelope; no Retry-After header, the delay only in RetryInfo.
    throw googleError(
      429,
      'RESOURCE_EXHAUSTED',
      'You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.',
      [
        {
          '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
          violations: [
            {
              quotaMetric: 'generativelanguage.googleapis.com/predict_long_running_requests_per_model',
              quotaId: failure.quotaId ?? 'PredictLongRunningRequestsPerMinutePerProjectPerModel',
              quotaDimensions: { location: 'global', model: 'veo-3.1-generate-preview' },
              quotaValue: failure.quotaValue ?? '10',
            },
          ],
        },
        {
          '@type': 'type.googleapis.com/google.rpc.Help',
          links: [
            {
              description: 'Learn more about Gemini API quotas',
              url: 'https://ai.google.dev/gemini-api/docs/rate-limits',
            },
          ],
        },
        ...(failure.retryDelay === undefined
          ? []
          : [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: failure.retryDelay }]),
      ],
    );
  }

  #knownModel(id: string): { generation: VeoGeneration; displayName: string } {
    const known = MODELS[id];
    if (!known || this.retiredModels.has(id)) throw googleError(404, 'NOT_FOUND', modelNotFound(id));
    return known;
  }

  async #submit(model: string, req: IncomingMessage, raw: Buffer): Promise<unknown> {
    const contentType = req.headers['content-type'] ?? '';
    // (choice) Google's front end reads the body as JSON only with a JSON content type.
    if (!/^application\/json\s*(;|$)/i.test(contentType)) {
      throw invalid('Invalid JSON payload received. Unexpected token.');
    }
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      throw invalid('Invalid JSON payload received. Unexpected token.');
    }
    if (!isObject(body)) throw invalid('Invalid JSON payload received. Unexpected token.');
    const generation = MODELS[model]?.generation ?? '3.1';
    const images: ReceivedImage[] = [];
    const effective = await this.#validate(generation, body, images);
    this.submits.push({ model, contentType, body, images, effective });
    const name = `models/${model}/operations/${randomId()}`;
    this.#operations.set(name, {
      name,
      effective,
      outcome: this.outcomes.shift() ?? { kind: 'video' },
      polls: 0,
    });
    // [live] the submit's answer carries only the name.
    return { name };
  }

  /** [docs] the parameter table, [sdk] the wire names, [live] the refusals; returns what Veo would make. */
  async #validate(generation: VeoGeneration, body: Json, images: ReceivedImage[]): Promise<EffectiveRequest> {
    for (const key of Object.keys(body)) {
      // [proto] instances, parameters (and `model`, from the URL); [sdk] `webhookConfig` at the top level.
      if (!['instances', 'parameters', 'model', 'webhookConfig'].includes(key)) {
        throw invalid(`Invalid JSON payload received. Unknown name "${key}": Cannot find field.`);
      }
    }
    if (body.webhookConfig !== undefined) {
      const hook = body.webhookConfig;
      if (!isObject(hook) || !Array.isArray(hook.uris) || hook.uris.some((u) => typeof u !== 'string')) {
        throw invalid("Invalid value at 'webhook_config'");
      }
    }
    const instances = body.instances;
    // (choice) no instance, or more than the one the SDKs write.
    if (!Array.isArray(instances) || instances.length !== 1 || !isObject(instances[0])) {
      throw invalid(USE_CASE);
    }
    const instance = instances[0];
    const v31 = generation === '3.1';
    onlyKeys(
      instance,
      v31 ? ['prompt', 'image', 'lastFrame', 'referenceImages', 'video'] : ['prompt', 'image'],
    );
    const parameters = body.parameters ?? {};
    if (!isObject(parameters)) throw invalid('Invalid JSON payload received. Unexpected token.');
    const allowed = ['aspectRatio', 'durationSeconds', 'negativePrompt', 'personGeneration', 'sampleCount'];
    if (generation === '2.0') allowed.push('enhancePrompt');
    else allowed.push('resolution');
    if (generation !== '2.0' && this.#options.acceptSeed) allowed.push('seed');
    onlyKeys(parameters, allowed);

    const prompt = instance.prompt;
    if (prompt !== undefined && typeof prompt !== 'string') throw invalid(USE_CASE);
    if (instance.image !== undefined) images.push(await this.#image(instance.image, 'image'));
    if (instance.lastFrame !== undefined) {
      if (instance.image === undefined) throw invalid(USE_CASE);
      images.push(await this.#image(instance.lastFrame, 'lastFrame'));
    }
    const references = instance.referenceImages;
    if (references !== undefined) {
      // [docs] up to 3 `asset` images, with a prompt, alone (no first/last frame or video), 8 s only.
      if (!Array.isArray(references) || references.length === 0 || references.length > 3)
        throw invalid(USE_CASE);
      if (!prompt || instance.image !== undefined || instance.video !== undefined) throw invalid(USE_CASE);
      for (const reference of references) {
        if (!isObject(reference)) throw invalid(USE_CASE);
        onlyKeys(reference, ['image', 'referenceType']);
        // [sdk] STYLE is refused for the Gemini API; `asset` and `ASSET` both name the one type.
        if (
          typeof reference.referenceType !== 'string' ||
          reference.referenceType.toLowerCase() !== 'asset'
        ) {
          throw invalid(USE_CASE);
        }
        images.push(await this.#image(reference.image, 'reference'));
      }
    }
    let extended: GeneratedFile | undefined;
    if (instance.video !== undefined) {
      const video = instance.video;
      if (!isObject(video)) throw invalid(USE_CASE);
      onlyKeys(video, ['uri']);
      extended = this.#fileOfUri(video.uri);
      if (!extended || instance.image !== undefined || instance.lastFrame !== undefined)
        throw invalid(USE_CASE);
    }
    if (!prompt && instance.image === undefined && !extended) throw invalid(USE_CASE);

    const durations = generation === '2.0' ? [5, 6, 8] : [4, 6, 8];
    const duration = parameters.durationSeconds ?? 8;
    if (typeof duration !== 'number') throw invalid(NOT_A_NUMBER);
    if (!durations.includes(duration)) throw invalid(outOfBound(durations[0] ?? 4, 8));
    if ((references !== undefined || extended) && duration !== 8) throw invalid(USE_CASE);

    const aspectRatio = parameters.aspectRatio ?? '16:9';
    if (aspectRatio !== '16:9' && aspectRatio !== '9:16') throw invalid(USE_CASE);
    const resolution = parameters.resolution ?? '720p';
    const resolutions = v31 ? ['720p', '1080p', '4k'] : ['720p', '1080p'];
    if (typeof resolution !== 'string' || !resolutions.includes(resolution)) throw invalid(USE_CASE);
    if (resolution !== '720p' && duration !== 8) {
      throw invalid(`${resolution} is not supported for a duration of ${duration} seconds.`);
    }
    if (generation === '3.0' && resolution === '1080p' && aspectRatio === '9:16') throw invalid(USE_CASE);
    if (extended && resolution !== '720p') throw invalid(USE_CASE);

    const samples = parameters.sampleCount ?? 1;
    if (!(generation === '2.0' ? [1, 2] : [1]).includes(samples as number)) throw invalid(USE_CASE);
    if (parameters.negativePrompt !== undefined && typeof parameters.negativePrompt !== 'string') {
      throw invalid(USE_CASE);
    }
    if (parameters.seed !== undefined) {
      const seed = parameters.seed;
      if (typeof seed !== 'number' || !Number.isInteger(seed) || seed < 0 || seed > 4294967295) {
        throw invalid(USE_CASE);
      }
    }
    const person = parameters.personGeneration;
    if (person !== undefined) {
      const fromImages = instance.image !== undefined || references !== undefined;
      const documented =
        generation === '2.0'
          ? fromImages
            ? ['allow_adult', 'dont_allow']
            : ['allow_all', 'allow_adult', 'dont_allow']
          : fromImages
            ? ['allow_adult']
            : ['allow_all'];
      if (
        typeof person !== 'string' ||
        !documented.includes(person) ||
        this.refusedPersonGeneration.has(person)
      ) {
        throw invalid(`${String(person)} for personGeneration is currently not supported.`);
      }
    }

    const fullHd = resolution === '1080p';
    const long = resolution === '4k' ? 2160 : fullHd ? 1080 : 720;
    const wide = resolution === '4k' ? 3840 : fullHd ? 1920 : 1280;
    return {
      generation,
      width: aspectRatio === '16:9' ? wide : long,
      height: aspectRatio === '16:9' ? long : wide,
      // [docs] an extension returns the input and about 7 s more.
      seconds: extended ? extended.seconds + 7 : duration,
      audio: generation !== '2.0',
    };
  }

  /** [sdk] `{bytesBase64Encoded, mimeType}`; [live] any other key, such as `imageBytes` or `data`, is refused. */
  async #image(value: unknown, role: ReceivedImage['role']): Promise<ReceivedImage> {
    if (!isObject(value)) throw invalid(USE_CASE);
    onlyKeys(value, ['bytesBase64Encoded', 'mimeType']);
    const { bytesBase64Encoded: data, mimeType } = value;
    if (typeof data !== 'string' || !/^[A-Za-z0-9+/]+={0,2}$/.test(data)) throw invalid(USE_CASE);
    // (choice) the types every client sends: PNG and JPEG, and WebP, which some send.
    if (typeof mimeType !== 'string' || !['image/png', 'image/jpeg', 'image/webp'].includes(mimeType)) {
      throw invalid(USE_CASE);
    }
    const bytes = Buffer.from(data, 'base64');
    const image = await loadImage(bytes).catch(() => {
      throw invalid(USE_CASE);
    });
    return { role, mimeType, width: image.width, height: image.height, bytes };
  }

  #fileOfUri(uri: unknown): GeneratedFile | undefined {
    if (typeof uri !== 'string') return undefined;
    const match = /\/v1beta\/files\/([a-z0-9]+):download/.exec(uri);
    const file = match ? this.#files.get(match[1] ?? '') : undefined;
    return file && !this.#expired(file) ? file : undefined;
  }

  #expired(file: GeneratedFile): boolean {
    return Date.now() + this.clockOffsetMs - file.createdAt > RETENTION_MS;
  }

  async #poll(name: string): Promise<unknown> {
    const operation = this.#operations.get(name);
    // (choice) an unknown operation.
    if (!operation) throw googleError(404, 'NOT_FOUND', `Operation ${name} not found.`);
    operation.polls++;
    if (operation.answer) return operation.answer;
    // [proto] proto3 JSON leaves out `done: false`; no progress metadata.
    if (operation.outcome.kind === 'never-finish' || operation.polls < this.pollsToFinish) return { name };
    operation.answer = await this.#finish(operation);
    return operation.answer;
  }

  async #finish(operation: Operation): Promise<Record<string, unknown>> {
    const { name, outcome } = operation;
    if (outcome.kind === 'error')
      return { name, done: true, error: { code: outcome.code, message: outcome.message } };
    if (outcome.kind === 'filtered') {
      const reasons = outcome.reasons ?? [RAI_REASON];
      return {
        name,
        done: true,
        response: {
          '@type': RESPONSE_TYPE,
          generateVideoResponse: { raiMediaFilteredCount: 1, raiMediaFilteredReasons: reasons },
        },
      };
    }
    const path = await this.#makeVideo(operation.effective);
    const file: GeneratedFile = {
      id: randomId(),
      path,
      token: randomBytes(16).toString('hex'),
      createdAt: Date.now() + this.clockOffsetMs,
      seconds: operation.effective.seconds,
    };
    this.#files.set(file.id, file);
    return {
      name,
      done: true,
      response: {
        '@type': RESPONSE_TYPE,
        generateVideoResponse: {
          generatedSamples: [
            { video: { uri: `${this.urlOrigin ?? this.url}/v1beta/files/${file.id}:download?alt=media` } },
          ],
        },
      },
    };
  }

  /** [docs] the URI needs the key and redirects (`curl -L`) to storage. */
  #download(id: string, url: URL): string {
    // (choice) the file service's download without `alt=media`.
    if (url.searchParams.get('alt') !== 'media') throw invalid('Download requires alt=media.');
    const file = this.#files.get(id);
    // (choice) an unknown or expired file.
    if (!file || this.#expired(file)) throw googleError(404, 'NOT_FOUND', 'Requested entity was not found.');
    const storage = this.#options.storageHost
      ? `http://${this.#options.storageHost}:${this.port}`
      : (this.urlOrigin ?? this.url);
    return `${storage}/blobs/${file.id}?token=${file.token}`;
  }

  /** The stand-in for a signed storage URL: the token is the credential, the key is not needed. */
  #blob(id: string, url: URL): string {
    const file = this.#files.get(id);
    if (!file || url.searchParams.get('token') !== file.token || this.#expired(file)) {
      throw new GoogleRefusal(403, 'Access denied.', 'text/plain');
    }
    return file.path;
  }

  /** An MP4 of the shape Veo makes (a flat colour, cheap to make and convert; a tone on Veo 3.x), once per shape. */
  #makeVideo(effective: EffectiveRequest): Promise<string> {
    const { width, height, seconds, audio } = effective;
    return fakeVideoFile(this.#options.cacheDir, {
      width,
      height,
      fps: FPS,
      seconds,
      picture: { colour: '0x2f6fb0' },
      tone: audio ? { frequency: 440, sampleRate: 48000, channels: 2 } : undefined,
    });
  }
}

/**
 * The server's live answers against the OpenAPI document it serves, so that the two cannot drift apart: every
 * operation of the document is called for success and for every error a request can provoke cheaply (no
 * credentials, a dead session, no CSRF token, an unknown id, a path that is not percent-encoded, a body that is
 * not JSON, of another type, or too large, no Host header, headers too large, the rate limit), and each answer's
 * status must be one the operation declares, its required headers present, its headers declared and of their
 * schema, its content type declared and its body valid against the declared schema (Ajv, JSON Schema 2020-12,
 * OpenAPI 3.1's dialect). The callbacks a task sends are checked against the document's `webhooks`. A route the
 * server has that the document lacks fails, and so does an operation no case here calls: a new route needs its
 * success request below.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { createOwnerAccount } from '../src/accounts/accounts.js';
import { MODEL_IDS } from '../src/domain/models.js';
import { writeTestImage } from './helpers/media-fixtures.js';
import { undocumentedRoutes } from './helpers/server-routes.js';
import { startTestService, type TestService } from './helpers/test-service.js';
import { until } from './helpers/until.js';
import { startWebhookReceiver, type WebhookReceiver } from './helpers/webhook-receiver.js';

// ajv-formats is CommonJS: its function is the module's default export, which TypeScript sees one level down.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

interface Schema {
  readonly $ref?: string;
  readonly type?: string;
  readonly format?: string;
  readonly [keyword: string]: unknown;
}
interface Header {
  readonly $ref?: string;
  readonly required?: boolean;
  readonly schema?: Schema;
}
interface Media {
  readonly schema?: Schema;
}
interface Response {
  readonly headers?: Record<string, Header>;
  readonly content?: Record<string, Media>;
}
interface Parameter {
  readonly in: 'path' | 'query' | 'header' | 'cookie';
  readonly name: string;
  readonly required?: boolean;
  readonly schema?: Schema;
}
interface Operation {
  readonly operationId: string;
  readonly security?: Record<string, string[]>[];
  readonly parameters?: Parameter[];
  readonly requestBody?: { readonly required?: boolean; readonly content: Record<string, Media> };
  readonly responses: Record<string, Response>;
}
interface Document {
  readonly servers?: { url: string }[];
  readonly paths: Record<string, Record<string, Operation>>;
  readonly webhooks?: Record<string, Record<string, Operation>>;
  readonly components: { headers?: Record<string, Header> };
}

/** One request, with its credentials. */
interface Call {
  readonly method: string;
  /** Path and query string. */
  readonly path: string;
  readonly headers?: Record<string, string>;
  readonly body?: string | Buffer;
}
interface Answer {
  readonly status: number;
  /** Names in lower case. */
  readonly headers: Record<string, string>;
  readonly body: Buffer;
}

const HTTP_METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete'];
const SAFE_METHODS = new Set(['GET', 'HEAD']);
const DOCUMENT_ID = 'https://videogen.test/openapi.json';
/**
 * Headers of the transport that no API document lists. Every other header an answer has must be declared on
 * it. (`X-Accel-Buffering` is a hint to proxies in front, not to clients.)
 */
const TRANSPORT_HEADERS = new Set([
  'date',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'content-type',
  'cache-control',
  'x-content-type-options',
  'x-accel-buffering',
]);
/** Task creation's body limit here (`VIDEOGEN_MAX_BODY_MB`); every other route's is smaller. */
const MAX_BODY_BYTES = 1024 * 1024;
const PASSWORD = 'correct horse battery staple';
const TEXT_TASK = {
  model: 'videogen-2.0-fast-text-to-video',
  prompt: 'a paper boat',
  duration: 4,
  quality: '480p',
};

/** `~` and `/` escaped (RFC 6901), then the segment made safe for a URI fragment. */
const pointerSegment = (segment: string) =>
  encodeURIComponent(segment.replace(/~/g, '~0').replace(/\//g, '~1'));

/** Sends one request with node:http; a body the server stopped reading after it answered is no failure. */
function send(base: string, call: Call): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...call.headers };
    if (call.body !== undefined) headers['content-length'] = Buffer.byteLength(call.body);
    let answered = false;
    const request = httpRequest(new URL(call.path, base), { method: call.method, headers }, (response) => {
      answered = true;
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: Object.fromEntries(
            Object.entries(response.headers).map(([name, value]) => [
              name,
              Array.isArray(value) ? value.join(', ') : (value ?? ''),
            ]),
          ),
          body: Buffer.concat(chunks),
        }),
      );
      response.on('error', reject);
    });
    request.on('error', (error) => {
      if (!answered) reject(error);
    });
    request.end(call.body);
  });
}

/** Sends `head` (a request line and headers, as written) on a socket of its own, and reads the answer to its end. */
function sendRaw(base: string, head: string): Promise<Answer> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(head));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const raw = Buffer.concat(chunks);
      const split = raw.indexOf('\r\n\r\n');
      const [statusLine = '', ...lines] = raw.subarray(0, split).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const length = Number(headers['content-length']);
      resolve({
        status: Number(statusLine.split(' ')[1]),
        headers,
        body: raw.subarray(split + 4, split + 4 + length),
      });
    });
  });
}

/** Checks answers and requests against the document. */
class Conformance {
  readonly #doc: Document;
  readonly #ajv = new Ajv2020({ allErrors: true, strict: true });
  readonly #compiled = new Map<string, ValidateFunction>();
  /** The statuses each operation was seen answering, by `METHOD /path`. */
  readonly seen = new Map<string, Set<number>>();

  constructor(doc: Document) {
    this.#doc = doc;
    addFormats(this.#ajv);
    // OpenAPI's own format for bytes, its vocabulary's annotation keywords, and the document's fields around
    // the schemas (the whole document is added, so that the schemas' `#/components/…` references resolve).
    this.#ajv.addFormat('binary', true);
    this.#ajv.addVocabulary(['example', 'discriminator', 'xml', 'externalDocs']);
    this.#ajv.addVocabulary(['openapi', 'info', 'servers', 'paths', 'webhooks', 'components', 'tags']);
    this.#ajv.addSchema({ ...structuredClone(doc), $id: DOCUMENT_ID } as never);
  }

  /** The object a `$ref` of the document points at. */
  #resolve<T>(value: T & { $ref?: string }): T {
    if (!value.$ref) return value;
    let target: unknown = this.#doc;
    for (const segment of value.$ref.replace(/^#\//, '').split('/')) {
      target = (target as Record<string, unknown>)[segment.replace(/~1/g, '/').replace(/~0/g, '~')];
    }
    return target as T;
  }

  /** The validator of the schema at `pointer` (segments from the document's root). */
  #validator(pointer: readonly string[]): ValidateFunction {
    const ref = `${DOCUMENT_ID}#/${pointer.map(pointerSegment).join('/')}`;
    let validate = this.#compiled.get(ref);
    if (!validate) {
      validate = this.#ajv.compile({ $ref: ref });
      this.#compiled.set(ref, validate);
    }
    return validate;
  }

  #valid(pointer: readonly string[], value: unknown): string | undefined {
    const validate = this.#validator(pointer);
    return validate(value) ? undefined : this.#ajv.errorsText(validate.errors);
  }

  /** A header's text as its schema's type. */
  static #typed(value: string, schema: Schema | undefined): unknown {
    if ((schema?.type === 'integer' || schema?.type === 'number') && /^-?\d+(\.\d+)?$/.test(value)) {
      return Number(value);
    }
    if (schema?.type === 'boolean' && (value === 'true' || value === 'false')) return value === 'true';
    return value;
  }

  /** Problems of a request the server answered with success: what the document requires of requests. */
  checkRequest(root: 'paths' | 'webhooks', path: string, method: string, call: Call): string[] {
    const operation = this.#doc[root]?.[path]?.[method.toLowerCase()];
    if (!operation) return [`${method} ${path} is not in the document's ${root}`];
    const name = `${method} ${path}`;
    const problems: string[] = [];
    const url = new URL(call.path, 'http://x');
    const headers = Object.fromEntries(
      Object.entries(call.headers ?? {}).map(([key, value]) => [key.toLowerCase(), value]),
    );
    for (const [index, parameter] of (operation.parameters ?? []).entries()) {
      const value =
        parameter.in === 'query'
          ? (url.searchParams.get(parameter.name) ?? undefined)
          : parameter.in === 'header'
            ? headers[parameter.name.toLowerCase()]
            : undefined;
      if (parameter.in !== 'query' && parameter.in !== 'header') continue;
      if (value === undefined) {
        if (parameter.required)
          problems.push(`${name}: the required ${parameter.in} ${parameter.name} is missing`);
        continue;
      }
      const invalid = this.#valid(
        [root, path, method.toLowerCase(), 'parameters', String(index), 'schema'],
        Conformance.#typed(value, parameter.schema),
      );
      if (invalid) problems.push(`${name}: ${parameter.in} ${parameter.name}: ${invalid}`);
    }
    const json = operation.requestBody?.content['application/json'];
    if (json && call.body !== undefined && /json/.test(headers['content-type'] ?? '')) {
      const invalid = this.#valid(
        [root, path, method.toLowerCase(), 'requestBody', 'content', 'application/json', 'schema'],
        JSON.parse(call.body.toString()),
      );
      if (invalid) problems.push(`${name}: request body: ${invalid}`);
    }
    return problems;
  }

  /** Problems of an answer of the operation `METHOD path`: none when the document describes it. */
  checkAnswer(path: string, method: string, answer: Answer): string[] {
    const operation = this.#doc.paths[path]?.[method.toLowerCase()];
    const name = `${method} ${path}`;
    if (!operation) return [`${name} is not in the document`];
    this.seen.set(name, (this.seen.get(name) ?? new Set()).add(answer.status));
    const status = String(answer.status);
    const response = operation.responses[status];
    if (!response) {
      return [
        `${name} answered ${status} ${answer.body.toString().slice(0, 300)}, which it does not declare ` +
          `(${Object.keys(operation.responses).join(', ')})`,
      ];
    }
    const problems: string[] = [];
    const declared = new Set<string>();
    for (const [headerName, reference] of Object.entries(response.headers ?? {})) {
      const header = this.#resolve(reference);
      declared.add(headerName.toLowerCase());
      const value = answer.headers[headerName.toLowerCase()];
      if (value === undefined) {
        if (header.required) problems.push(`${name} ${status}: the required header ${headerName} is missing`);
        continue;
      }
      const pointer = reference.$ref
        ? [
            ...reference.$ref
              .replace(/^#\//, '')
              .split('/')
              .map((s) => s.replace(/~1/g, '/')),
            'schema',
          ]
        : ['paths', path, method.toLowerCase(), 'responses', status, 'headers', headerName, 'schema'];
      const invalid = this.#valid(pointer, Conformance.#typed(value, header.schema));
      if (invalid) problems.push(`${name} ${status}: header ${headerName}: ${value}: ${invalid}`);
    }
    for (const headerName of Object.keys(answer.headers)) {
      if (!declared.has(headerName) && !TRANSPORT_HEADERS.has(headerName)) {
        problems.push(`${name} ${status}: sends the header ${headerName}, which it does not declare`);
      }
    }
    const content = response.content;
    const contentType = answer.headers['content-type'];
    if (!content) {
      if (answer.body.length > 0 || contentType) {
        problems.push(`${name} ${status}: declares no content, answered ${contentType} ${answer.body}`);
      }
      return problems;
    }
    const mediaType = contentType?.split(';')[0]?.trim().toLowerCase() ?? '';
    // A key may carry parameters (`text/plain; version=0.0.4`), or be a range (`image/*`).
    const key = Object.keys(content).find((candidate) => {
      const type = candidate.split(';')[0]?.trim().toLowerCase() ?? '';
      return (
        type === mediaType ||
        type === '*/*' ||
        (type.endsWith('/*') && mediaType.startsWith(type.slice(0, -1)))
      );
    });
    if (!key) {
      problems.push(
        `${name} ${status}: answered ${contentType}, not one of ${Object.keys(content).join(', ')}`,
      );
      return problems;
    }
    if (method === 'HEAD') return problems;
    const schema = content[key]?.schema;
    const pointer = ['paths', path, method.toLowerCase(), 'responses', status, 'content', key, 'schema'];
    let value: unknown;
    if (/^application\/(.+\+)?json$/.test(mediaType)) {
      try {
        value = JSON.parse(answer.body.toString());
      } catch {
        problems.push(`${name} ${status}: the body is not JSON: ${answer.body.toString().slice(0, 200)}`);
        return problems;
      }
    } else if (schema?.type === 'string' && schema.format !== 'binary') {
      value = answer.body.toString();
    } else {
      return problems;
    }
    const invalid = this.#valid(pointer, value);
    if (invalid) {
      problems.push(`${name} ${status}: ${invalid}: ${answer.body.toString().slice(0, 300)}`);
    }
    return problems;
  }

  /** Problems of a callback the server sent: the document's `webhooks` entry describes it. */
  checkCallback(webhook: string, headers: Record<string, string>, body: string): string[] {
    return this.checkRequest('webhooks', webhook, 'POST', {
      method: 'POST',
      path: '/',
      headers: { ...headers, 'content-type': headers['content-type'] ?? '' },
      body,
    });
  }
}

let server: TestService;
let hook: WebhookReceiver;
let doc: Document;
let conformance: Conformance;
let dir: string;
/** An API key of the signed-in account. */
let key: string;
let accountId: string;
/** The dashboard session's cookie and CSRF token. */
let session: { cookie: string; csrf: string };
/** A completed task (its callbacks went to `hook`), and an uploaded image. */
let done: { id: string; results: string[] };
let fileId: string;
let image: Buffer;
const problems: string[] = [];

const bearer = (token = key) => ({ authorization: `Bearer ${token}` });
const cookie = (of = session) => ({ cookie: of.cookie, 'x-csrf-token': of.csrf });
const json = (body: unknown) => ({
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

/** The document's operation of a request: its path template, found by matching the request's path. */
function operationOf(method: string, path: string): string {
  const pathname = path.split('?')[0] ?? '';
  const match = Object.keys(doc.paths).find((template) => {
    const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    return pattern.test(pathname) && doc.paths[template]?.[method.toLowerCase()];
  });
  assert.ok(match, `no operation in the document for ${method} ${pathname}`);
  return match;
}

/** Sends `call` as the operation `template` and records what the document says of the answer. */
async function exchange(call: Call, template = operationOf(call.method, call.path)): Promise<Answer> {
  const answer = await send(server.url, call);
  problems.push(...conformance.checkAnswer(template, call.method, answer));
  return answer;
}

/** A request that must succeed: a 2xx, and a request the document allows. */
async function succeed(call: Call, template?: string): Promise<Answer> {
  const path = template ?? operationOf(call.method, call.path);
  const answer = await exchange(call, path);
  assert.ok(
    answer.status >= 200 && answer.status < 300,
    `${call.method} ${call.path} answered ${answer.status}: ${answer.body.toString().slice(0, 300)}`,
  );
  problems.push(...conformance.checkRequest('paths', path, call.method, call));
  return answer;
}

const bodyOf = <T>(answer: Answer) => JSON.parse(answer.body.toString()) as T;
const errorCode = (answer: Answer) => bodyOf<{ error?: { code?: string } }>(answer).error?.code;

async function createTask(): Promise<string> {
  const answer = await succeed({
    method: 'POST',
    path: '/v1/videos/generations',
    ...withHeaders(json(TEXT_TASK), bearer()),
  });
  return bodyOf<{ id: string }>(answer).id;
}

async function finishedTask(): Promise<string> {
  const id = await createTask();
  await succeed({ method: 'POST', path: `/v1/tasks/${id}/cancel`, headers: bearer() });
  return id;
}

function withHeaders(
  call: { headers?: Record<string, string>; body?: string },
  headers: Record<string, string>,
) {
  return { ...call, headers: { ...call.headers, ...headers } };
}

function multipart(
  field: string,
  filename: string,
  type: string,
  content: Buffer,
  fields: Record<string, string> = {},
) {
  const boundary = 'videogen-conformance-boundary';
  return {
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    body: Buffer.concat([
      ...Object.entries(fields).map(([name, value]) =>
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`),
      ),
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${filename}"\r\n` +
          `Content-Type: ${type}\r\n\r\n`,
      ),
      content,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]),
  };
}

async function signIn(email: string, password = PASSWORD): Promise<{ cookie: string; csrf: string }> {
  const answer = await succeed({
    method: 'POST',
    path: '/dashboard/api/sign-in',
    ...json({ email, password }),
  });
  return {
    cookie: (answer.headers['set-cookie'] ?? '').split(';')[0] ?? '',
    csrf: bodyOf<{ csrf_token: string }>(answer).csrf_token,
  };
}

/**
 * The request that succeeds for each operation, by `operationId`, with its credentials; it may make others
 * first (each checked too). Error cases are derived from it. An operation missing here fails the test.
 */
/** The model ID routed to the Ark engine with callbacks: no request of this test uses it. */
const CALLBACK_MODEL = 'videogen-2.0-reference-to-video';

/** A loopback port nothing listens on now: listened on, then closed. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  assert.ok(address && typeof address === 'object');
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return address.port;
}

const SUCCESS: Record<string, () => Promise<Call>> = {
  healthz: async () => ({ method: 'GET', path: '/healthz' }),
  readyz: async () => ({ method: 'GET', path: '/readyz' }),
  metrics: async () => ({ method: 'GET', path: '/metrics' }),
  createGeneration: async () => {
    const idempotent = withHeaders(json(TEXT_TASK), { ...bearer(), 'idempotency-key': 'conformance-1' });
    const first = await succeed({ method: 'POST', path: '/v1/videos/generations', ...idempotent });
    const replay = await succeed({ method: 'POST', path: '/v1/videos/generations', ...idempotent });
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    await succeed({
      method: 'POST',
      path: `/v1/tasks/${bodyOf<{ id: string }>(first).id}/cancel`,
      headers: bearer(),
    });
    // A monthly limit the creation would pass: 402.
    const owner = await createOwnerAccount(server.service.store, {
      email: 'limited@example.com',
      password: PASSWORD,
    });
    const limited = await signIn('limited@example.com');
    await succeed({
      method: 'POST',
      path: '/dashboard/api/limits',
      ...withHeaders(json({ monthly_video_seconds: 1 }), cookie(limited)),
    });
    const limitedKey = (await server.newKey('development', owner.accountId)).key;
    const refused = await exchange({
      method: 'POST',
      path: '/v1/videos/generations',
      ...withHeaders(json(TEXT_TASK), bearer(limitedKey)),
    });
    assert.equal(refused.status, 402);
    assert.equal(errorCode(refused), 'budget_exceeded');
    // The main request: a task with Prefer: wait=0, cancelled at once so that the worker stays free.
    return {
      method: 'POST',
      path: '/v1/videos/generations',
      ...withHeaders(json(TEXT_TASK), { ...bearer(), prefer: 'wait=0' }),
    };
  },
  // Ark's delivery names its task by id alone; one for no job of ours is taken all the same (204).
  takeProviderCallback: async () => ({
    method: 'POST',
    path: '/v1/provider-callbacks/seedance',
    ...json({ id: 'cgt-20261129-conformance', model: 'dreamina-seedance-2-0-260128', status: 'running' }),
  }),
  listTasks: async () => ({ method: 'GET', path: '/v1/tasks?limit=2', headers: bearer() }),
  getTask: async () => {
    await succeed({
      method: 'GET',
      path: `/v1/tasks/${done.id}`,
      headers: { ...bearer(), prefer: 'wait=1' },
    });
    return { method: 'GET', path: `/v1/tasks/${done.id}`, headers: bearer() };
  },
  deleteTask: async () => ({
    method: 'DELETE',
    path: `/v1/tasks/${await finishedTask()}`,
    headers: bearer(),
  }),
  cancelTask: async () => ({
    method: 'POST',
    path: `/v1/tasks/${await createTask()}/cancel`,
    headers: bearer(),
  }),
  streamTaskEvents: async () => {
    const stream = await succeed({ method: 'GET', path: `/v1/tasks/${done.id}/events`, headers: bearer() });
    const ids = [...stream.body.toString().matchAll(/^id: (\d+)$/gm)].map((match) => match[1]);
    const last = ids.at(-1);
    assert.ok(last, `no event ids in ${stream.body}`);
    const ended = await succeed({
      method: 'GET',
      path: `/v1/tasks/${done.id}/events`,
      headers: { ...bearer(), 'last-event-id': last },
    });
    assert.equal(ended.status, 204);
    return { method: 'GET', path: `/v1/tasks/${done.id}/events`, headers: bearer() };
  },
  listDeliveries: async () => ({ method: 'GET', path: `/v1/tasks/${done.id}/deliveries`, headers: bearer() }),
  redeliver: async () => ({
    method: 'POST',
    path: `/v1/tasks/${done.id}/deliveries/redeliver`,
    headers: bearer(),
  }),
  uploadFile: async () => {
    const form = multipart('file', 'frame.png', 'image/png', image);
    return { method: 'POST', path: '/v1/files', headers: { ...form.headers, ...bearer() }, body: form.body };
  },
  getFile: async () => ({ method: 'GET', path: `/v1/files/${fileId}`, headers: bearer() }),
  getFileContent: async () => ({ method: 'GET', path: `/v1/files/${fileId}/content`, headers: bearer() }),
  createVideo: async () => {
    // OpenAI's SDKs send a form, with the reference image as a file; the main request is JSON.
    const form = multipart('input_reference', 'frame.png', 'image/png', image, {
      prompt: 'the frame comes alive',
      seconds: '4',
      size: '854x480',
    });
    const formed = await succeed({
      method: 'POST',
      path: '/v1/videos',
      headers: { ...form.headers, ...bearer() },
      body: form.body,
    });
    await succeed({
      method: 'POST',
      path: `/v1/tasks/${bodyOf<{ id: string }>(formed).id}/cancel`,
      headers: bearer(),
    });
    const refused = await exchange({
      method: 'POST',
      path: '/v1/videos',
      ...withHeaders(json({ prompt: 'a paper boat', size: '1024x1792' }), bearer()),
    });
    assert.equal(refused.status, 400);
    assert.equal(bodyOf<{ error: { param: string } }>(refused).error.param, 'size');
    return {
      method: 'POST',
      path: '/v1/videos',
      ...withHeaders(
        json({ model: 'sora-2', prompt: 'a paper boat', seconds: '4', size: '854x480' }),
        bearer(),
      ),
    };
  },
  listVideos: async () => {
    const first = await succeed({ method: 'GET', path: '/v1/videos?limit=1', headers: bearer() });
    const last = bodyOf<{ last_id: string }>(first).last_id;
    return { method: 'GET', path: `/v1/videos?limit=1&order=desc&after=${last}`, headers: bearer() };
  },
  getVideo: async () => ({ method: 'GET', path: `/v1/videos/${done.id}`, headers: bearer() }),
  deleteVideo: async () => ({
    method: 'DELETE',
    path: `/v1/videos/${await finishedTask()}`,
    headers: bearer(),
  }),
  getVideoContent: async () => {
    for (const variant of ['thumbnail', 'spritesheet']) {
      await succeed({
        method: 'GET',
        path: `/v1/videos/${done.id}/content?variant=${variant}`,
        headers: bearer(),
      });
    }
    const part = await succeed({
      method: 'GET',
      path: `/v1/videos/${done.id}/content`,
      headers: { ...bearer(), range: 'bytes=0-99' },
    });
    assert.equal(part.status, 206);
    const running = await createTask();
    const early = await exchange({ method: 'GET', path: `/v1/videos/${running}/content`, headers: bearer() });
    assert.equal(early.status, 404);
    await succeed({ method: 'POST', path: `/v1/tasks/${running}/cancel`, headers: bearer() });
    return { method: 'GET', path: `/v1/videos/${done.id}/content`, headers: bearer() };
  },
  remixVideo: async () => ({
    method: 'POST',
    path: `/v1/videos/${done.id}/remix`,
    ...withHeaders(json({ prompt: 'the same boat, at night' }), bearer()),
  }),
  getUsage: async () => ({ method: 'GET', path: '/v1/usage?group_by=model', headers: bearer() }),
  listModels: async () => ({ method: 'GET', path: '/v1/models', headers: bearer() }),
  getModel: async () => ({ method: 'GET', path: `/v1/models/${TEXT_TASK.model}`, headers: bearer() }),
  getResult: async () => {
    const link = resultLink();
    const part = await succeed({ method: 'GET', path: link, headers: { range: 'bytes=0-99' } });
    assert.equal(part.status, 206);
    const outside = await exchange({ method: 'GET', path: link, headers: { range: 'bytes=999999999-' } });
    assert.equal(outside.status, 416);
    return { method: 'GET', path: link };
  },
  getResultHead: async () => ({ method: 'HEAD', path: resultLink() }),
  signIn: async () => ({
    method: 'POST',
    path: '/dashboard/api/sign-in',
    ...json({ email: 'owner@example.com', password: PASSWORD }),
  }),
  signOut: async () => ({
    method: 'POST',
    path: '/dashboard/api/sign-out',
    headers: cookie(await signIn('owner@example.com')),
  }),
  getSession: async () => ({ method: 'GET', path: '/dashboard/api/session', headers: cookie() }),
  getSessionStatus: async () => {
    await succeed({ method: 'GET', path: '/dashboard/api/session/status' });
    return { method: 'GET', path: '/dashboard/api/session/status', headers: cookie() };
  },
  setSessionEnvironment: async () => ({
    method: 'PUT',
    path: '/dashboard/api/session/environment',
    ...withHeaders(json({ environment: 'development' }), cookie()),
  }),
  listApiKeys: async () => ({ method: 'GET', path: '/dashboard/api/keys', headers: cookie() }),
  createApiKey: async () => ({
    method: 'POST',
    path: '/dashboard/api/keys',
    ...withHeaders(json({ name: 'conformance', environment: 'development' }), cookie()),
  }),
  revokeApiKey: async () => ({
    method: 'POST',
    path: `/dashboard/api/keys/${(await server.newKey('development', accountId)).id}/revoke`,
    headers: cookie(),
  }),
  rotateApiKey: async () => ({
    method: 'POST',
    path: `/dashboard/api/keys/${(await server.newKey('development', accountId)).id}/rotate`,
    ...withHeaders(json({ grace_period_hours: 1 }), cookie()),
  }),
  setApiKeyLimits: async () => ({
    method: 'POST',
    path: `/dashboard/api/keys/${(await server.newKey('development', accountId)).id}/limits`,
    ...withHeaders(json({ monthly_video_seconds: 600, monthly_budget: null }), cookie()),
  }),
  getAccountLimits: async () => ({ method: 'GET', path: '/dashboard/api/limits', headers: cookie() }),
  setAccountLimits: async () => ({
    method: 'POST',
    path: '/dashboard/api/limits',
    ...withHeaders(json({ monthly_video_seconds: null }), cookie()),
  }),
  getWebhookSecret: async () => ({ method: 'GET', path: '/dashboard/api/webhook-secret', headers: cookie() }),
  rotateWebhookSecret: async () => ({
    method: 'POST',
    path: '/dashboard/api/webhook-secret/rotate',
    headers: cookie(),
  }),
  getTaskRequest: async () => ({
    method: 'GET',
    path: `/dashboard/api/tasks/${done.id}/request`,
    headers: cookie(),
  }),
};

/** `results[0]` of the completed task, as a path on this server. */
function resultLink(): string {
  const link = new URL(done.results[0] ?? '');
  assert.equal(link.origin, server.url);
  return link.pathname + link.search;
}

const without = (headers: Record<string, string> | undefined, ...names: string[]) =>
  Object.fromEntries(Object.entries(headers ?? {}).filter(([name]) => !names.includes(name)));

/** A request derived from an operation's successful one, and what it must get. */
interface DerivedCase {
  readonly what: string;
  readonly call: Call;
  /** An error (any status the document declares, or `status` when given), or any answer. */
  readonly expect: 'error' | 'any';
  readonly status?: number;
  readonly code?: string;
}

/** The requests derived from an operation's successful one: errors, and variations the server may take or refuse. */
/** Whether the operation takes a body of any media type (the range of all types), as a provider's callback does. */
function takesAnyType(operation: Operation): boolean {
  return Object.keys(operation.requestBody?.content ?? {}).includes('*/*');
}

function derivedCases(template: string, operation: Operation, call: Call): DerivedCase[] {
  const schemes = new Set((operation.security ?? []).flatMap((requirement) => Object.keys(requirement)));
  const changes = !SAFE_METHODS.has(call.method);
  const cases: DerivedCase[] = [];
  const bare = { ...call, headers: without(call.headers, 'authorization', 'cookie', 'x-csrf-token') };
  if (schemes.size > 0) cases.push({ what: 'no credentials', call: bare, expect: 'error', status: 401 });
  if (schemes.has('dashboardSession')) {
    cases.push({
      what: 'a session that does not exist',
      expect: 'error',
      call: { ...bare, headers: { ...bare.headers, cookie: 'videogen_session=nope' } },
      status: 401,
      code: 'not_signed_in',
    });
    if (changes) {
      cases.push({
        what: 'the session without its CSRF token',
        expect: 'error',
        call: { ...bare, headers: { ...bare.headers, cookie: session.cookie } },
        status: 403,
        code: 'invalid_csrf_token',
      });
    }
  }
  const [pathname = ''] = call.path.split('?');
  const names = [...template.matchAll(/\{([^}]+)\}/g)].map((match) => match[1] ?? '');
  if (names.length > 0) {
    const parts = pathname.split('/');
    const positions = template.split('/').flatMap((part, index) => (part.startsWith('{') ? [index] : []));
    const replaced = (value: (index: number) => string) =>
      parts.map((part, index) => (positions.includes(index) ? value(index) : part)).join('/');
    cases.push({ what: 'unknown ids', call: { ...call, path: replaced(() => 'nope') }, expect: 'error' });
    cases.push({
      what: 'a path that is not percent-encoded UTF-8',
      expect: 'error',
      call: { ...call, path: replaced((index) => (index === positions[0] ? '%zz' : (parts[index] ?? ''))) },
      status: 400,
      code: 'malformed_request',
    });
  }
  if (call.method === 'GET') {
    const path = `${call.path}${call.path.includes('?') ? '&' : '?'}nope=1`;
    cases.push({ what: 'an unknown query parameter', call: { ...call, path }, expect: 'any' });
  }
  if (changes) {
    const headers = without(call.headers, 'content-type');
    cases.push({
      what: 'a body that is not JSON',
      expect: 'error',
      call: { ...call, headers: { ...headers, 'content-type': 'application/json' }, body: '{' },
      status: 400,
      code: 'invalid_json',
    });
    // A route that takes any type of body (a provider's callback) has no other type to refuse.
    if (!takesAnyType(operation))
      cases.push({
        what: 'a body of another type',
        expect: 'error',
        call: { ...call, headers: { ...headers, 'content-type': 'text/plain' }, body: 'hello' },
        status: 415,
        code: 'unsupported_media_type',
      });
    cases.push({
      what: 'a body over every limit',
      expect: 'error',
      call: {
        ...call,
        headers: { ...headers, 'content-type': 'application/json' },
        body: `"${'a'.repeat(MAX_BODY_BYTES)}"`,
      },
      status: 413,
      code: 'payload_too_large',
    });
  }
  return cases;
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'videogen-conformance-'));
  await writeTestImage(join(dir, 'frame.png'), { width: 64, height: 48, colour: [200, 60, 40] });
  image = await readFile(join(dir, 'frame.png'));
  hook = await startWebhookReceiver();
  // An Ark engine with provider callbacks, routed a model ID this test never uses, so that the callbacks route
  // is served; the public URL it needs is the server's own address.
  const port = await freePort();
  const enginesFile = join(dir, 'engines.yaml');
  await writeFile(
    enginesFile,
    [
      'engines:',
      '  seedance:',
      '    type: ark',
      '    base_url: http://127.0.0.1:9/api/v3',
      '    api_key: ark-conformance-key',
      '    model: dreamina-seedance-2-0-260128',
      '    callbacks: true',
      'models:',
      ...MODEL_IDS.map((id) => `  ${id}: ${id === CALLBACK_MODEL ? 'seedance' : 'local'}`),
      '',
    ].join('\n'),
  );
  server = await startTestService({
    VIDEOGEN_WORKER_CONCURRENCY: '1',
    VIDEOGEN_MAX_BODY_MB: String(MAX_BODY_BYTES / (1024 * 1024)),
    VIDEOGEN_PORT: String(port),
    VIDEOGEN_PUBLIC_URL: `http://127.0.0.1:${port}`,
    VIDEOGEN_ENGINES_FILE: enginesFile,
  });
  doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as Document;
  conformance = new Conformance(doc);
  ({ accountId } = await createOwnerAccount(server.service.store, {
    email: 'owner@example.com',
    password: PASSWORD,
  }));
  key = (await server.newKey('development', accountId)).key;
  session = await signIn('owner@example.com');
  const created = await succeed({
    method: 'POST',
    path: '/v1/videos/generations',
    ...withHeaders(json({ ...TEXT_TASK, callback_url: `${hook.url}/callbacks` }), bearer()),
  });
  const { id } = bodyOf<{ id: string }>(created);
  done = await until(
    async () => {
      const answer = await succeed({
        method: 'GET',
        path: `/v1/tasks/${id}`,
        headers: { ...bearer(), prefer: 'wait=30' },
      });
      const task = bodyOf<{ id: string; status: string; results?: string[] }>(answer);
      assert.notEqual(task.status, 'failed', JSON.stringify(task));
      return task.status === 'completed' && { id, results: task.results ?? [] };
    },
    'the task completes',
    { timeoutMs: 120_000 },
  );
  const form = multipart('file', 'frame.png', 'image/png', image);
  const uploaded = await succeed({
    method: 'POST',
    path: '/v1/files',
    headers: { ...form.headers, ...bearer() },
    body: form.body,
  });
  fileId = bodyOf<{ id: string }>(uploaded).id;
});
after(async () => {
  await server?.close();
  await hook?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('the OpenAPI document and the live server', () => {
  it('documents every route the server has', () => {
    const missing = undocumentedRoutes(server.service.app, doc.paths);
    assert.deepEqual(missing, [], `routes missing from /openapi.json: ${missing.join(', ')}`);
  });

  it('names this server under servers', () => {
    assert.deepEqual(
      doc.servers?.map((entry) => entry.url),
      [server.url],
    );
  });

  it('describes every answer of every operation, for success and for each error a request can cause', async () => {
    const operations = Object.entries(doc.paths).flatMap(([template, item]) =>
      Object.entries(item)
        .filter(([method]) => HTTP_METHODS.includes(method))
        .map(([method, operation]) => ({ template, method: method.toUpperCase(), operation })),
    );
    const uncovered = operations.filter(({ operation }) => !SUCCESS[operation.operationId]);
    assert.deepEqual(
      uncovered.map(({ method, template }) => `${method} ${template}`),
      [],
      'operations without a success request in this test',
    );
    for (const { template, method, operation } of operations) {
      const call = await (SUCCESS[operation.operationId] as () => Promise<Call>)();
      assert.equal(call.method, method, operation.operationId);
      for (const error of derivedCases(template, operation, call)) {
        const answer = await exchange(error.call, template);
        const what = `${method} ${template}, ${error.what}`;
        if (error.expect === 'error') assert.ok(answer.status >= 400, `${what}: answered ${answer.status}`);
        if (error.status !== undefined) assert.equal(answer.status, error.status, what);
        // A HEAD answer has no body to read the code from.
        if (error.code !== undefined && method !== 'HEAD') assert.equal(errorCode(answer), error.code, what);
      }
      for (const [what, head, status] of [
        ['no Host header', `${method} ${call.path} HTTP/1.1\r\nConnection: close\r\n\r\n`, 400],
        [
          'headers too large',
          `${method} ${call.path} HTTP/1.1\r\nHost: x\r\nX-Large: ${'a'.repeat(20 * 1024)}\r\nConnection: close\r\n\r\n`,
          431,
        ],
      ] as const) {
        const answer = await sendRaw(server.url, head);
        problems.push(...conformance.checkAnswer(template, method, answer));
        assert.equal(answer.status, status, `${method} ${template}, ${what}`);
      }
      await succeed(call, template);
    }
    assert.deepEqual(problems, [], 'answers the document does not describe');
    const unseen = operations.filter(({ template, method }) => {
      const statuses = [...(conformance.seen.get(`${method} ${template}`) ?? [])];
      return !statuses.some((status) => status < 300) || !statuses.some((status) => status >= 400);
    });
    assert.deepEqual(
      unseen.map(({ method, template }) => `${method} ${template}`),
      [],
      'operations not seen both succeed and fail',
    );
  });

  it('answers 429 with Retry-After where the document says, past the rate limit', async () => {
    const limited = await startTestService({ VIDEOGEN_RATE_LIMIT_PER_MINUTE: '1' });
    try {
      const limitedDoc = (await (await fetch(`${limited.url}/openapi.json`)).json()) as Document;
      const checker = new Conformance(limitedDoc);
      const found: string[] = [];
      for (const [template, item] of Object.entries(limitedDoc.paths)) {
        for (const [method, operation] of Object.entries(item)) {
          if (!HTTP_METHODS.includes(method)) continue;
          if (!(operation.security ?? []).some((requirement) => 'apiKey' in requirement)) continue;
          const fresh = (await limited.newKey()).key;
          const call = {
            method: method.toUpperCase(),
            path: template.replace(/\{[^}]+\}/g, 'nope'),
            headers: bearer(fresh),
          };
          for (let i = 0; i < 2; i++) {
            const answer = await send(limited.url, call);
            found.push(...checker.checkAnswer(template, call.method, answer));
            if (i === 1) assert.equal(answer.status, 429, `${call.method} ${template}`);
          }
        }
      }
      assert.deepEqual(found, []);
    } finally {
      await limited.close();
    }
  });

  it('describes the callbacks a task sends under webhooks, with their webhook-* headers', async () => {
    assert.ok(doc.webhooks?.taskStatusChanged?.post, 'no webhooks.taskStatusChanged');
    const statusOf = (body: string) => (JSON.parse(body) as { status: string }).status;
    await until(
      () =>
        ['processing', 'completed'].every((status) =>
          hook.received.some((callback) => statusOf(callback.body) === status),
        ),
      'the callbacks of the task starting and completing',
    );
    const received = [...hook.received];
    const found = received.flatMap((callback) =>
      conformance.checkCallback(
        'taskStatusChanged',
        Object.fromEntries(Object.entries(callback.headers).map(([name, value]) => [name, String(value)])),
        callback.body,
      ),
    );
    assert.deepEqual(found, []);
  });
});

/**
 * Generated requests against the whole service over real HTTP (fast-check): every method on the routes of
 * /openapi.json and the pages, with real and random ids, percent-encodings valid and not, query strings, API
 * keys, session cookies and CSRF tokens right and wrong, content types, JSON bodies of random shapes (and shaped
 * like a generation request), multipart bodies from random parts (whole or cut short) and empty bodies. No
 * answer may be a 5xx, and every error answer with a body must be the documented
 * `{ error: { code, message, type, param?, request_id } }`, its code from the catalogue.
 *
 * Bounded and repeatable: VIDEOGEN_FUZZ_RUNS runs (default 300) from VIDEOGEN_FUZZ_SEED (default below), the
 * seed printed as a diagnostic. A failure prints the counterexample and the `seed`/`path` that replay it.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { request } from 'undici';
import { createOwnerAccount } from '../src/accounts/accounts.js';
import { MODEL_IDS } from '../src/domain/models.js';
import { ERROR_STATUSES } from '../src/http/error-statuses.js';
import { openAiErrorType } from '../src/http/openai-error-type.js';
import { writeTestImage } from './helpers/media-fixtures.js';
import { freshSchemas, postgresSuite, TEST_DATABASE_URL } from './helpers/postgres.js';
import { startTestService, type TestService } from './helpers/test-service.js';

const SEED = Number(process.env.VIDEOGEN_FUZZ_SEED || 20261124);
const RUNS = Number(process.env.VIDEOGEN_FUZZ_RUNS || 300);
/** An answer slower than this is a hang (nothing here waits on purpose: no `Prefer: wait=N` with N > 0). */
const ANSWER_TIMEOUT_MS = 15_000;
/** The owner whose session the requests carry; generated sign-ins use another, so that this one is never locked out. */
const EMAIL = 'fuzz@example.com';
const PASSWORD = 'correct horse battery staple';
const DECOY_EMAIL = 'decoy@example.com';
/**
 * Stand-ins for the live session's cookie and CSRF token in generated headers, replaced as each request is sent:
 * a generated sign-out ends the session, and the next request must carry the one made after it.
 */
const SESSION_COOKIE = '$SESSION_COOKIE';
const CSRF_TOKEN = '$CSRF_TOKEN';
const CATALOGUE: Record<string, { status: number; type: string }> = ERROR_STATUSES;

interface Fixtures {
  readonly key: string;
  /** Ids that exist: a task, an uploaded file, a key that is not `key` (so revoking it changes nothing here). */
  readonly ids: readonly string[];
  /** `[method, path template]` of every documented operation, `{name}` for each parameter. */
  readonly operations: readonly (readonly [string, string])[];
  readonly png: Buffer;
}

interface GeneratedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: Buffer | undefined;
}

const PAGES = [
  '/',
  '/dashboard',
  '/dashboard/',
  '/dashboard/assets/app.js',
  '/dashboard/assets/nope.js',
  '/dashboard/assets/../index.html',
  '/docs',
  '/docs/',
  '/docs/openapi.json',
  '/openapi.json',
  '/favicon.ico',
  '/healthz',
  '/readyz',
  '/metrics',
];

/** Every byte of `text` percent-encoded: what a client that encodes everything sends. */
const encodeAll = (text: string) =>
  [...Buffer.from(text, 'utf8')].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');

/** A path segment or query value, encoded as clients do, over-encoded, or broken. */
const pathText = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9._~-]{0,40}$/),
  fc.string({ unit: 'binary', maxLength: 30 }).map(encodeURIComponent),
  fc.string({ unit: 'binary', maxLength: 12 }).map(encodeAll),
  fc.constantFrom('%', '%zz', '%E0%A4%A', '%00', '%2F', '%2e%2e', '..', '.', '%C0%AF', '%FF', '%u0041', '+'),
  fc.stringMatching(/^[a-z0-9-]{200,300}$/),
);

function idArbitrary(fixtures: Fixtures) {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...fixtures.ids) },
    { weight: 1, arbitrary: fc.constantFrom(...fixtures.ids).map((id) => `${id}x`) },
    { weight: 1, arbitrary: fc.constantFrom(...fixtures.ids).map((id) => id.toUpperCase()) },
    { weight: 1, arbitrary: fc.constantFrom(...fixtures.ids).map(encodeAll) },
    // A NUL or another control character inside a real id: PostgreSQL refuses the text outright.
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom(...fixtures.ids), fc.nat(40), fc.constantFrom('%00', '%01', '%0A', '%7F'))
        .map(([id, at, control]) => id.slice(0, at) + control + id.slice(at)),
    },
    { weight: 3, arbitrary: pathText },
  );
}

/** A query string: none, or parameters the routes read and others, with values right and wrong. */
const queryArbitrary = fc.option(
  fc
    .array(
      fc.tuple(
        fc.oneof(
          fc.constantFrom(
            'limit',
            'after',
            'before',
            'status',
            'model',
            'created_after',
            'expires',
            'signature',
          ),
          pathText,
        ),
        fc.oneof(fc.constantFrom('-1', '0', '1', '100', '1e3', 'completed', 'true', ''), pathText),
      ),
      { maxLength: 4 },
    )
    .map((pairs) => `?${pairs.map(([key, value]) => `${key}=${value}`).join('&')}`),
  { nil: '' },
);

/** A documented operation's method and its path, each parameter a real id, a near miss or anything. */
function operationArbitrary(fixtures: Fixtures) {
  return fc
    .tuple(
      fc.constantFrom(...fixtures.operations),
      fc.array(idArbitrary(fixtures), { minLength: 4, maxLength: 4 }),
    )
    .map(([[method, template], values]) => {
      let i = 0;
      return { method, path: template.replace(/\{[^}]+\}/g, () => values[i++] ?? '') };
    });
}

/** Any method on any path: documented ones (reshaped too), the pages, and made-up ones. */
function targetArbitrary(fixtures: Fixtures) {
  const documented = operationArbitrary(fixtures).map(({ path }) => path);
  const random = fc
    .array(
      fc.oneof(fc.constantFrom('v1', 'tasks', 'files', 'dashboard', 'api', 'keys', 'results'), pathText),
      {
        maxLength: 5,
      },
    )
    .map((segments) => `/${segments.join('/')}`);
  const path = fc.oneof(
    { weight: 4, arbitrary: documented },
    { weight: 2, arbitrary: fc.constantFrom(...PAGES) },
    { weight: 2, arbitrary: random },
    { weight: 1, arbitrary: documented.map((p) => p.replace('/', '//')) },
    { weight: 1, arbitrary: documented.map((p) => `${p}/`) },
  );
  return fc.record({
    method: fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'),
    path,
  });
}

/** A header value undici will send: visible ASCII and spaces, not starting or ending with a space. */
const headerText = fc.stringMatching(/^[!-~]([ -~]{0,60}[!-~])?$/);

/** Text with a NUL or another control character inside: what PostgreSQL refuses to store, or logs misprint. */
const controlText = fc
  .tuple(
    fc.string({ maxLength: 20 }),
    fc.constantFrom('\u0000', '\u0001', '\n', '\u007f'),
    fc.string({ maxLength: 20 }),
  )
  .map(([before, control, after]) => before + control + after);

function jsonBody() {
  const url = fc.oneof(
    fc.webUrl(),
    fc.constantFrom(
      'http://127.0.0.1:1/x.png',
      'https://user:secret@example.com/a.png',
      'ftp://example.com/a.png',
      'javascript:alert(1)',
      'data:image/png;base64,',
      'data:text/plain,hello',
    ),
    fc
      .uint8Array({ maxLength: 64 })
      .map((bytes) => `data:image/png;base64,${Buffer.from(bytes).toString('base64')}`),
    fc.string({ maxLength: 40 }),
    controlText.map((text) => `https://example.com/${text}`),
  );
  const anything = fc.jsonValue({ maxDepth: 3 });
  /** Mostly a value the route accepts, so that requests get past the first check, else anything. */
  const mostly = <T>(good: fc.Arbitrary<T>, ...bad: fc.Arbitrary<unknown>[]) =>
    fc.oneof(
      { weight: 4, arbitrary: good as fc.Arbitrary<unknown> },
      ...[...bad, anything].map((arbitrary) => ({ weight: 1, arbitrary })),
    );
  /** A body of one route's shape, its main fields mostly present, now and then a field it does not know. */
  const shaped = (fields: Record<string, fc.Arbitrary<unknown>>) =>
    fc
      .tuple(
        fc.record(fields, { requiredKeys: [] }),
        fc.option(fc.tuple(fc.string({ maxLength: 12 }), anything), { freq: 4 }),
      )
      .map(([body, extra]) => (extra === null ? body : { ...body, [extra[0]]: extra[1] }));
  const urls = (most: number) => mostly(fc.array(url, { maxLength: most }), fc.array(url, { maxLength: 13 }));
  const generation = shaped({
    model: mostly(fc.constantFrom(...MODEL_IDS), fc.string({ maxLength: 40 })),
    prompt: mostly(
      fc.string({ minLength: 1, maxLength: 200 }),
      fc.string({ unit: 'grapheme', maxLength: 50 }),
      fc.constantFrom('', '   ', 'image 1 then video 2 with audio 3'),
      controlText,
    ),
    duration: mostly(fc.integer({ min: 4, max: 15 }), fc.integer({ min: -5, max: 30 }), fc.double()),
    quality: mostly(fc.constantFrom('480p', '720p', '1080p'), fc.constant('4k')),
    aspect_ratio: mostly(
      fc.constantFrom('16:9', '9:16', '1:1', '4:3', '3:4', '21:9', 'adaptive'),
      fc.constant('0:0'),
    ),
    seed: mostly(fc.nat(), fc.constantFrom(4294967295, 4294967296, -1, 1.5, 1e300)),
    image_urls: urls(2),
    video_urls: urls(3),
    audio_urls: urls(3),
    callback_url: mostly(url),
  });
  const signIn = shaped({
    email: mostly(
      fc.oneof(fc.constant(DECOY_EMAIL), fc.emailAddress()),
      fc.string({ maxLength: 300 }),
      controlText,
    ),
    password: mostly(
      fc.oneof(fc.constant(PASSWORD), fc.string({ minLength: 1, maxLength: 30 })),
      fc.string({ minLength: 1000, maxLength: 1100 }),
    ),
  });
  const newKey = shaped({
    name: mostly(fc.string({ minLength: 1, maxLength: 100 }), fc.string({ maxLength: 120 }), controlText),
    environment: mostly(fc.constantFrom('development', 'production'), fc.constant('staging')),
  });
  const rotation = shaped({
    grace_period_hours: mostly(fc.constantFrom(0, 1, 24, 168, 720), fc.integer()),
  });
  return fc
    .oneof(
      { weight: 6, arbitrary: generation.map((value) => JSON.stringify(value)) },
      {
        weight: 3,
        arbitrary: fc.oneof(signIn, newKey, rotation).map((value) => JSON.stringify(value)),
      },
      { weight: 2, arbitrary: anything.map((value) => JSON.stringify(value)) },
      // Not JSON, or JSON the parser refuses (prototype pollution).
      { weight: 1, arbitrary: fc.string({ maxLength: 60 }) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          '{"__proto__":{"polluted":true}}',
          '{"constructor":{"prototype":{"polluted":true}}}',
          '{"model":',
          '[]',
          'null',
          '"text"',
          '\u0000',
          '{"prompt":"\ud800"}',
        ),
      },
    )
    .map((text) => Buffer.from(text, 'utf8'));
}

interface Part {
  readonly name: string | undefined;
  readonly filename: string | undefined;
  readonly type: string | undefined;
  readonly content: Buffer;
}

function multipartBody(png: Buffer) {
  const part: fc.Arbitrary<Part> = fc.record({
    name: fc.option(fc.oneof(fc.constant('file'), fc.string({ maxLength: 10 })), { nil: undefined }),
    filename: fc.option(fc.oneof(fc.constantFrom('a.png', 'clip.mp4', '../../etc/passwd', ''), fc.string()), {
      nil: undefined,
    }),
    type: fc.option(
      fc.oneof(fc.constantFrom('image/png', 'video/mp4', 'audio/wav', 'text/plain'), headerText),
      {
        nil: undefined,
      },
    ),
    content: fc.oneof(
      fc.constant(png),
      fc.nat({ max: png.length }).map((end) => png.subarray(0, end)),
      fc.uint8Array({ maxLength: 256 }).map((bytes) => Buffer.from(bytes)),
    ),
  });
  return fc
    .record({
      boundary: fc.oneof(fc.constant('fuzzboundary'), fc.stringMatching(/^[A-Za-z0-9'()+_,./:=?-]{1,70}$/)),
      parts: fc.array(part, { maxLength: 3 }),
      /** Where to cut the body short, as a fraction of its length; 1 keeps it whole. */
      cut: fc.oneof(fc.constant(1), fc.double({ min: 0, max: 1, noNaN: true })),
      closed: fc.boolean(),
    })
    .map(({ boundary, parts, cut, closed }) => {
      const chunks: Buffer[] = [];
      for (const { name, filename, type, content } of parts) {
        let disposition = 'Content-Disposition: form-data';
        if (name !== undefined) disposition += `; name="${name}"`;
        if (filename !== undefined) disposition += `; filename="${filename}"`;
        const headers = [disposition, ...(type === undefined ? [] : [`Content-Type: ${type}`])];
        chunks.push(
          Buffer.from(`--${boundary}\r\n${headers.join('\r\n')}\r\n\r\n`),
          content,
          Buffer.from('\r\n'),
        );
      }
      if (closed) chunks.push(Buffer.from(`--${boundary}--\r\n`));
      const whole = Buffer.concat(chunks);
      return { boundary, body: whole.subarray(0, Math.floor(whole.length * cut)) };
    });
}

/** Anything: each part of the request (target, credentials, type, body) chosen on its own. */
function wildRequest(fixtures: Fixtures): fc.Arbitrary<GeneratedRequest> {
  const jsonTypes = fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'Application/JSON',
    'application/json; charset=latin1',
    'application/problem+json',
  );
  const otherTypes = fc.oneof(
    fc.constantFrom(
      'text/plain',
      'application/x-www-form-urlencoded',
      'application/octet-stream',
      'multipart/form-data',
      'multipart/form-data; boundary=',
      'multipart/mixed; boundary=fuzzboundary',
      'image/png',
      ';',
    ),
    headerText,
  );
  const body = fc.oneof(
    {
      weight: 2,
      arbitrary: fc.constant({ body: undefined, types: fc.option(fc.oneof(jsonTypes, otherTypes)) }),
    },
    {
      weight: 2,
      arbitrary: fc.constant({ body: Buffer.alloc(0), types: fc.option(fc.oneof(jsonTypes, otherTypes)) }),
    },
    {
      weight: 8,
      arbitrary: jsonBody().map((bytes) => ({
        body: bytes,
        types: fc.option(fc.oneof({ weight: 4, arbitrary: jsonTypes }, { weight: 1, arbitrary: otherTypes })),
      })),
    },
    {
      weight: 3,
      arbitrary: multipartBody(fixtures.png).map(({ boundary, body }) => ({
        body,
        types: fc.option(
          fc.oneof(
            { weight: 4, arbitrary: fc.constant(`multipart/form-data; boundary=${boundary}`) },
            { weight: 1, arbitrary: fc.constant(`multipart/form-data; boundary="${boundary}"`) },
            { weight: 1, arbitrary: otherTypes },
            { weight: 1, arbitrary: jsonTypes },
          ),
        ),
      })),
    },
  );
  const withType = body.chain(({ body, types }) => types.map((type) => ({ body, type })));
  return fc
    .record({
      target: fc.oneof(
        { weight: 3, arbitrary: operationArbitrary(fixtures) },
        { weight: 2, arbitrary: targetArbitrary(fixtures) },
      ),
      query: queryArbitrary,
      payload: withType,
      authorization: fc.option(
        fc.oneof(
          { weight: 4, arbitrary: fc.constant(`Bearer ${fixtures.key}`) },
          { weight: 1, arbitrary: fc.constant(`bearer   ${fixtures.key}  `) },
          { weight: 1, arbitrary: fc.constant('Bearer vg_dev_notakey') },
          { weight: 1, arbitrary: headerText.map((text) => `Bearer ${text}`) },
          { weight: 1, arbitrary: headerText },
        ),
      ),
      cookie: fc.option(
        fc.oneof(
          { weight: 3, arbitrary: fc.constant(SESSION_COOKIE) },
          { weight: 1, arbitrary: fc.constant(`${SESSION_COOKIE}; other=1`) },
          { weight: 1, arbitrary: headerText.map((text) => `videogen_session=${text}`) },
          { weight: 1, arbitrary: headerText },
        ),
      ),
      csrf: fc.option(fc.oneof(fc.constant(CSRF_TOKEN), headerText)),
      extra: fc.array(
        fc.oneof(
          fc.tuple(
            fc.constant('idempotency-key'),
            fc.oneof(headerText, fc.stringMatching(/^[!-~]{256,300}$/)),
          ),
          // Only malformed or zero waits: a positive one would hold the answer on purpose.
          fc.tuple(
            fc.constant('prefer'),
            fc.constantFrom('wait=0', 'wait=abc', 'wait', 'wait=-1', 'respond-async'),
          ),
          fc.tuple(
            fc.constant('range'),
            fc.oneof(fc.constantFrom('bytes=0-0', 'bytes=5-1', 'bytes=-1'), headerText),
          ),
          fc.tuple(fc.constant('if-none-match'), headerText),
          fc.tuple(fc.constant('accept'), fc.constantFrom('text/event-stream', 'application/json', '*/*')),
          fc.tuple(fc.constant('last-event-id'), headerText),
          fc.tuple(fc.constant('accept-encoding'), fc.constantFrom('gzip', 'br', 'identity;q=0')),
          fc.tuple(fc.constant('x-forwarded-for'), headerText),
        ),
        { maxLength: 3 },
      ),
    })
    .map(({ target, query, payload, authorization, cookie, csrf, extra }): GeneratedRequest => {
      const headers: Record<string, string> = Object.fromEntries(extra);
      if (authorization !== null) headers.authorization = authorization;
      if (cookie !== null) headers.cookie = cookie;
      if (csrf !== null) headers['x-csrf-token'] = csrf;
      if (payload.type !== null) headers['content-type'] = payload.type;
      return {
        method: target.method,
        path: target.path + query,
        headers,
        // A body with GET is sent (HTTP gives it no meaning; the server must still answer), none with HEAD.
        body: target.method === 'HEAD' ? undefined : payload.body,
      };
    });
}

/**
 * A request as a client of the operation would make it (its method, the right credentials, the body type it
 * reads), so that most get past authentication and parsing to the handler; what varies is the ids, the query
 * and the body's content.
 */
function plausibleRequest(fixtures: Fixtures): fc.Arbitrary<GeneratedRequest> {
  return fc
    .record({
      operation: operationArbitrary(fixtures),
      query: queryArbitrary,
      json: jsonBody(),
      multipart: multipartBody(fixtures.png),
    })
    .map(({ operation: { method, path }, query, json, multipart }): GeneratedRequest => {
      const headers: Record<string, string> = path.startsWith('/dashboard/')
        ? { cookie: SESSION_COOKIE, 'x-csrf-token': CSRF_TOKEN }
        : { authorization: `Bearer ${fixtures.key}` };
      let body: Buffer | undefined;
      if (method === 'POST' && path === '/v1/files') {
        headers['content-type'] = `multipart/form-data; boundary=${multipart.boundary}`;
        body = multipart.body;
      } else if (method === 'POST' || method === 'PUT') {
        headers['content-type'] = 'application/json';
        body = json;
      }
      return { method, path: path + query, headers, body };
    });
}

function requestArbitrary(fixtures: Fixtures): fc.Arbitrary<GeneratedRequest> {
  return fc.oneof(
    { weight: 2, arbitrary: plausibleRequest(fixtures) },
    { weight: 3, arbitrary: wildRequest(fixtures) },
  );
}

/** What is wrong with an answer, or undefined when nothing is. */
function problemWith(
  sent: GeneratedRequest,
  status: number,
  headers: Record<string, string | string[] | undefined>,
  text: string,
): string | undefined {
  if (status >= 500) return `answered ${status}: ${text.slice(0, 500)}`;
  if (status < 400 || text.length === 0 || sent.method === 'HEAD') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return `error answer ${status} is not JSON: ${text.slice(0, 200)}`;
  }
  if (typeof parsed !== 'object' || parsed === null || Object.keys(parsed).join() !== 'error') {
    return `error answer ${status} is not { error }: ${text.slice(0, 200)}`;
  }
  const error = (parsed as { error: Record<string, unknown> }).error;
  // Before a route is known (a malformed path, a body too large) the answer is ours, whatever the path.
  if (isOpenAiVideosPath(sent.path) && !('request_id' in error))
    return openAiErrorProblem(error, status, text);
  const allowed = new Set(['code', 'message', 'type', 'param', 'request_id']);
  const extra = Object.keys(error).filter((key) => !allowed.has(key));
  if (extra.length > 0) return `error has fields ${extra.join(', ')}: ${text}`;
  const entry = typeof error.code === 'string' ? CATALOGUE[error.code] : undefined;
  if (!entry) return `error code ${String(error.code)} is not in the catalogue: ${text}`;
  if (entry.status !== status)
    return `${String(error.code)} answered ${status}, the catalogue says ${entry.status}`;
  if (error.type !== entry.type) return `${String(error.code)} has type ${String(error.type)}: ${text}`;
  if (typeof error.message !== 'string' || error.message.length === 0) return `no message: ${text}`;
  if (error.param !== undefined && typeof error.param !== 'string') return `param is not a string: ${text}`;
  if (typeof error.request_id !== 'string' || !/^req_/.test(error.request_id)) return `request_id: ${text}`;
  if (headers['x-request-id'] !== undefined && headers['x-request-id'] !== error.request_id) {
    return `request_id ${error.request_id} is not the x-request-id header ${String(headers['x-request-id'])}`;
  }
  return undefined;
}

/** The OpenAI Videos API's routes (`/v1/videos…`, but our own `/v1/videos/generations`), which answer in OpenAI's envelope. */
function isOpenAiVideosPath(path: string): boolean {
  return /^\/v1\/videos(\/|\?|$)/.test(path) && !path.startsWith('/v1/videos/generations');
}

/** OpenAI's envelope (http/openai-error-type.ts): its four fields, the catalogue's code and status, OpenAI's type. */
function openAiErrorProblem(
  error: Record<string, unknown>,
  status: number,
  text: string,
): string | undefined {
  const extra = Object.keys(error).filter((key) => !['code', 'message', 'type', 'param'].includes(key));
  if (extra.length > 0) return `OpenAI error has fields ${extra.join(', ')}: ${text}`;
  const entry = typeof error.code === 'string' ? CATALOGUE[error.code] : undefined;
  if (!entry) return `error code ${String(error.code)} is not in the catalogue: ${text}`;
  if (entry.status !== status)
    return `${String(error.code)} answered ${status}, the catalogue says ${entry.status}`;
  if (error.type !== openAiErrorType(status))
    return `${String(error.code)} has OpenAI type ${String(error.type)}: ${text}`;
  if (typeof error.message !== 'string' || error.message.length === 0) return `no message: ${text}`;
  if (error.param !== null && error.param !== undefined && typeof error.param !== 'string') {
    return `param is not a string: ${text}`;
  }
  return undefined;
}

interface Session {
  cookie: string;
  csrf: string;
}

async function send(
  base: string,
  sent: GeneratedRequest,
  session: Session,
): Promise<{ status: number; problem: string | undefined }> {
  const headers = Object.fromEntries(
    Object.entries(sent.headers).map(([name, value]) => [
      name,
      value.replaceAll(SESSION_COOKIE, session.cookie).replaceAll(CSRF_TOKEN, session.csrf),
    ]),
  );
  const response = await request(base + sent.path, {
    method: sent.method,
    headers,
    body: sent.body,
    signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS),
  });
  // An event stream stays open by design: its status and headers are the answer to check.
  if (String(response.headers['content-type'] ?? '').startsWith('text/event-stream')) {
    // Destroyed without a reason, the body reports an AbortError: expected here, not a failure.
    response.body.on('error', () => undefined);
    response.body.destroy();
    const problem = response.statusCode >= 500 ? `answered ${response.statusCode}` : undefined;
    return { status: response.statusCode, problem };
  }
  const text = await response.body.text();
  return {
    status: response.statusCode,
    problem: problemWith(sent, response.statusCode, response.headers, text),
  };
}

const postgres = await postgresSuite();
const schema = freshSchemas();

/**
 * The same requests against each store: PostgreSQL refuses some text SQLite stores (a NUL byte), so a value
 * that reaches a query unchecked fails there alone.
 */
const STORES: readonly {
  name: string;
  env: () => Record<string, string>;
  options: { skip: string | false };
}[] = [
  { name: 'SQLite', env: () => ({}), options: { skip: false } },
  {
    name: 'PostgreSQL',
    env: () => ({ VIDEOGEN_DATABASE_URL: TEST_DATABASE_URL, VIDEOGEN_DATABASE_SCHEMA: schema() }),
    options: postgres,
  },
];

for (const store of STORES)
  describe(`generated requests against every route, ${store.name}`, store.options, () => {
    let server: TestService;
    let dir: string;
    let fixtures: Fixtures;
    let session: Session;

    async function signIn(): Promise<Session> {
      const answer = await fetch(`${server.url}/dashboard/api/sign-in`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: EMAIL, password: PASSWORD }),
      });
      assert.equal(answer.status, 200);
      const cookie = (answer.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
      return { cookie, csrf: ((await answer.json()) as { csrf_token: string }).csrf_token };
    }

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'videogen-fuzz-'));
      await writeTestImage(join(dir, 'small.png'), { width: 32, height: 18, colour: [30, 90, 200] });
      const png = await readFile(join(dir, 'small.png'));
      // No worker: created tasks stay pending, so nothing renders or calls out while the requests run.
      server = await startTestService(store.env());
      const { accountId } = await createOwnerAccount(server.service.store, {
        email: EMAIL,
        password: PASSWORD,
      });
      const { key } = await server.newKey('development', accountId);
      const spare = await server.newKey('development', accountId);
      const auth = { authorization: `Bearer ${key}` };

      const created = await fetch(`${server.url}/v1/videos/generations`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'videogen-2.0-fast-text-to-video', prompt: 'a fuzzed kite' }),
      });
      assert.equal(created.status, 200);
      const task = (await created.json()) as { id: string };
      const form = new FormData();
      form.append('file', new Blob([png], { type: 'image/png' }), 'small.png');
      const uploaded = await fetch(`${server.url}/v1/files`, { method: 'POST', headers: auth, body: form });
      assert.equal(uploaded.status, 200);
      const file = (await uploaded.json()) as { id: string };

      await createOwnerAccount(server.service.store, { email: DECOY_EMAIL, password: PASSWORD });
      session = await signIn();

      const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
        paths: Record<string, Record<string, unknown>>;
      };
      const operations = Object.entries(document.paths).flatMap(([path, item]) =>
        Object.keys(item).map((method) => [method.toUpperCase(), path] as const),
      );
      assert.ok(operations.length >= 20, `only ${operations.length} operations documented`);
      fixtures = { key, ids: [task.id, file.id, spare.id], operations, png };
    });

    after(async () => {
      await server?.close();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it(`answers ${RUNS} generated requests without a 5xx, every error in the documented shape`, async (t) => {
      t.diagnostic(`seed ${SEED} (VIDEOGEN_FUZZ_SEED), ${RUNS} runs (VIDEOGEN_FUZZ_RUNS)`);
      await fc.assert(
        fc.asyncProperty(requestArbitrary(fixtures), async (sent) => {
          const { status, problem } = await send(server.url, sent, session);
          assert.equal(problem, undefined, `${sent.method} ${sent.path}: ${problem}`);
          if (status === 204 && sent.path.includes('sign-out')) session = await signIn();
        }),
        { seed: SEED, numRuns: RUNS, includeErrorInReport: true },
      );
      // Still serving after all of it.
      assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
    });
  });

/**
 * The dashboard's routes over real HTTP, without a browser: sign-in and its rate limit, the session cookie's
 * flags, CSRF on every state-changing request made with the cookie (the dashboard's own routes and `/v1`),
 * key creation, revocation and rotation with a grace period as the API sees them, the environment switch, the
 * webhook secret, and `videogen accounts create`.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createOwnerAccount } from '../src/accounts/accounts.js';
import type { PublicTask } from '../src/domain/task.js';
import { writeTestImage } from './helpers/media-fixtures.js';
import { CLI_PATH, runCli, serverEnv, startServer } from './helpers/server-process.js';
import { startTestService, type TestService } from './helpers/test-service.js';

const PASSWORD = 'correct horse battery staple';
const TEXT = {
  model: 'videogen-2.0-fast-text-to-video',
  prompt: 'a paper boat',
  duration: 4,
  quality: '480p',
};

interface Answer<T = Record<string, unknown>> {
  status: number;
  body: T;
  headers: Headers;
}

/** A browser's worth of state: the session cookie and the CSRF token the page would hold. */
class Browser {
  cookie: string | undefined;
  csrf: string | undefined;
  constructor(readonly base: string) {}

  async request<T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
    options: { csrf?: string | null; headers?: Record<string, string> } = {},
  ): Promise<Answer<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (this.cookie) headers.cookie = this.cookie;
    const csrf = options.csrf === undefined ? this.csrf : options.csrf;
    if (csrf) headers['x-csrf-token'] = csrf;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${this.base}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : {}) as T, headers: response.headers };
  }

  async signIn(email: string, password: string): Promise<Answer> {
    const answer = await this.request('POST', '/dashboard/api/sign-in', { email, password });
    const setCookie = answer.headers.get('set-cookie');
    if (answer.status === 200 && setCookie) {
      this.cookie = setCookie.split(';')[0];
      this.csrf = answer.body.csrf_token as string;
    }
    return answer;
  }
}

function errorCode(answer: Answer): unknown {
  return (answer.body.error as { code?: string } | undefined)?.code;
}

async function bearer(base: string, key: string, path = '/v1/tasks'): Promise<Answer> {
  const response = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });
  return {
    status: response.status,
    body: (await response.json()) as Record<string, unknown>,
    headers: response.headers,
  };
}

describe('dashboard routes', () => {
  let server: TestService;
  let accountId: string;

  before(async () => {
    server = await startTestService();
    ({ accountId } = await createOwnerAccount(server.service.store, {
      email: 'Ada@Example.com',
      password: PASSWORD,
    }));
  });
  after(() => server.close());

  it('signs in with the right password only, setting an HttpOnly SameSite=Strict cookie', async () => {
    const browser = new Browser(server.url);
    assert.equal(errorCode(await browser.request('GET', '/dashboard/api/session')), 'not_signed_in');
    const wrong = await browser.signIn('ada@example.com', 'not the password');
    assert.equal(wrong.status, 401);
    assert.equal(errorCode(wrong), 'invalid_credentials');
    assert.equal(wrong.headers.get('set-cookie'), null);
    assert.equal(errorCode(await browser.signIn('nobody@example.com', PASSWORD)), 'invalid_credentials');

    const right = await browser.signIn('ADA@example.com', PASSWORD);
    assert.equal(right.status, 200);
    assert.deepEqual(right.body.account, { id: accountId, email: 'ada@example.com' });
    assert.equal(right.body.environment, 'development');
    const cookie = right.headers.get('set-cookie') ?? '';
    assert.match(cookie, /^videogen_session=[A-Za-z0-9_-]{43};/);
    assert.match(cookie, /; HttpOnly/);
    assert.match(cookie, /; SameSite=Strict/);
    assert.match(cookie, /; Path=\//);
    assert.doesNotMatch(cookie, /; Secure/, 'plain http here');
    const session = await browser.request('GET', '/dashboard/api/session');
    assert.equal(session.status, 200);
    assert.equal(session.body.csrf_token, browser.csrf);
  });

  it('refuses sign-ins after five failures for an email, even with the right password', async () => {
    const email = 'grace@example.com';
    await createOwnerAccount(server.service.store, { email, password: PASSWORD });
    const browser = new Browser(server.url);
    for (let i = 0; i < 5; i++) assert.equal((await browser.signIn(email, `guess ${i}`)).status, 401);
    const locked = await browser.signIn(email, PASSWORD);
    assert.equal(locked.status, 429);
    assert.equal(errorCode(locked), 'rate_limited');
    assert.equal((locked.body.error as { param?: string }).param, 'email');
    const retryAfter = Number(locked.headers.get('retry-after'));
    assert.ok(retryAfter > 850 && retryAfter <= 900, `Retry-After ${retryAfter}`);
    assert.equal(locked.headers.get('set-cookie'), null);
    // Other owners are not locked out by someone guessing at this one.
    assert.equal((await new Browser(server.url).signIn('ada@example.com', PASSWORD)).status, 200);
  });

  it('needs the session CSRF token on every state-changing request made with the cookie', async () => {
    const browser = new Browser(server.url);
    await browser.signIn('ada@example.com', PASSWORD);
    const key = { name: 'csrf', environment: 'development' };
    for (const csrf of [null, 'forged-token', `${browser.csrf}x`]) {
      const refused = await browser.request('POST', '/dashboard/api/keys', key, { csrf });
      assert.equal(refused.status, 403);
      assert.equal(errorCode(refused), 'invalid_csrf_token');
      const created = await browser.request('POST', '/v1/videos/generations', TEXT, { csrf });
      assert.equal(errorCode(created), 'invalid_csrf_token');
    }
    assert.equal(
      errorCode(await browser.request('POST', '/dashboard/api/sign-out', undefined, { csrf: null })),
      'invalid_csrf_token',
    );
    assert.equal((await browser.request('GET', '/dashboard/api/session')).status, 200, 'still signed in');
    // Another session's token is no good either.
    const other = new Browser(server.url);
    await other.signIn('ada@example.com', PASSWORD);
    assert.equal(
      errorCode(await browser.request('POST', '/dashboard/api/keys', key, { csrf: other.csrf ?? null })),
      'invalid_csrf_token',
    );
    assert.equal((await browser.request('POST', '/dashboard/api/keys', key)).status, 201);
    const { keys } = {
      keys: (await browser.request<{ data: { name: string }[] }>('GET', '/dashboard/api/keys')).body.data,
    };
    assert.equal(
      keys.filter((k) => k.name === 'csrf').length,
      1,
      'only the request with the token made a key',
    );
  });

  it('opens the API with the cookie, in the environment the dashboard looks at', async () => {
    const browser = new Browser(server.url);
    await browser.signIn('ada@example.com', PASSWORD);
    const created = await browser.request<PublicTask>('POST', '/v1/videos/generations', { ...TEXT, seed: 5 });
    assert.equal(created.status, 200);
    const request = await browser.request<{ request: Record<string, unknown> }>(
      'GET',
      `/dashboard/api/tasks/${created.body.id}/request`,
    );
    assert.deepEqual(request.body.request, {
      model: TEXT.model,
      prompt: TEXT.prompt,
      duration: 4,
      quality: '480p',
      aspect_ratio: '16:9',
      seed: 5,
      return_last_frame: false,
      web_search: false,
      generate_audio: true,
    });
    const listed = await browser.request<{ data: PublicTask[] }>('GET', '/v1/tasks');
    assert.deepEqual(
      listed.body.data.map((t) => t.id),
      [created.body.id],
    );

    const switched = await browser.request('PUT', '/dashboard/api/session/environment', {
      environment: 'production',
    });
    assert.equal(switched.body.environment, 'production');
    assert.deepEqual((await browser.request<{ data: PublicTask[] }>('GET', '/v1/tasks')).body.data, []);
    assert.equal((await browser.request('GET', `/v1/tasks/${created.body.id}`)).status, 404);
    assert.equal(
      (await browser.request('GET', `/dashboard/api/tasks/${created.body.id}/request`)).status,
      404,
    );
    const production = await server.newKey('production', accountId);
    const prodTask = await browser.request<PublicTask>('POST', '/v1/videos/generations', TEXT);
    assert.deepEqual(
      ((await bearer(server.url, production.key)).body.data as PublicTask[]).map((t) => t.id),
      [prodTask.body.id],
    );
    await browser.request('PUT', '/dashboard/api/session/environment', { environment: 'development' });

    // Another account's key sees none of it.
    const stranger = await server.newKey();
    assert.equal((await bearer(server.url, stranger.key, `/v1/tasks/${created.body.id}`)).status, 404);
  });

  it("shows a task's request with an uploaded file as the URL the client sent, not a storage reference", async () => {
    const { key } = await server.newKey('development', accountId);
    const image = join(await mkdtemp(join(tmpdir(), 'videogen-request-')), 'photo.png');
    await writeTestImage(image, { width: 320, height: 240, colour: [40, 80, 200] });
    const form = new FormData();
    form.append('file', new Blob([await readFile(image)], { type: 'image/png' }), 'photo.png');
    const uploaded = await fetch(`${server.url}/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
    const file = (await uploaded.json()) as { url: string };
    assert.equal(uploaded.status, 200, JSON.stringify(file));
    await rm(dirname(image), { recursive: true, force: true });
    const created = await fetch(`${server.url}/v1/videos/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'videogen-2.0-fast-image-to-video',
        prompt: 'the photo comes to life',
        image_urls: [file.url],
      }),
    });
    const task = (await created.json()) as PublicTask;
    assert.equal(created.status, 200, JSON.stringify(task));

    const browser = new Browser(server.url);
    await browser.signIn('ada@example.com', PASSWORD);
    const shown = await browser.request<{ request: Record<string, unknown> }>(
      'GET',
      `/dashboard/api/tasks/${task.id}/request`,
    );
    assert.equal(shown.status, 200);
    assert.deepEqual(shown.body.request.image_urls, [file.url]);
  });

  it('creates a key shown once, which the API accepts until it is revoked', async () => {
    const browser = new Browser(server.url);
    await browser.signIn('ada@example.com', PASSWORD);
    const created = await browser.request<{ key: string; api_key: Record<string, unknown> }>(
      'POST',
      '/dashboard/api/keys',
      { name: 'production server', environment: 'production' },
    );
    assert.equal(created.status, 201);
    const { key, api_key: record } = created.body;
    assert.match(key, /^vg_prod_/);
    assert.ok(key.startsWith(String(record.prefix)));
    assert.equal(record.name, 'production server');
    assert.equal(record.last_used_at, null);
    const listed = await browser.request<{ data: Record<string, unknown>[] }>('GET', '/dashboard/api/keys');
    const row = listed.body.data.find((k) => k.id === record.id);
    assert.deepEqual(row, record, 'listed as created');
    assert.ok(!JSON.stringify(listed.body).includes(key), 'the list never shows the key itself');

    assert.equal((await bearer(server.url, key)).status, 200);
    const used = (await browser.request<{ data: Record<string, unknown>[] }>('GET', '/dashboard/api/keys'))
      .body.data;
    assert.equal(typeof used.find((k) => k.id === record.id)?.last_used_at, 'number');

    const revoked = await browser.request('POST', `/dashboard/api/keys/${record.id}/revoke`);
    assert.equal(revoked.status, 200);
    const refused = await bearer(server.url, key);
    assert.equal(refused.status, 401);
    assert.equal((refused.body.error as { code: string }).code, 'invalid_api_key');
    assert.equal(
      errorCode(await browser.request('POST', `/dashboard/api/keys/${record.id}/revoke`)),
      'api_key_not_found',
    );
    const afterRevoke = (await browser.request<{ data: { id: string }[] }>('GET', '/dashboard/api/keys')).body
      .data;
    assert.ok(!afterRevoke.some((k) => k.id === record.id));

    // Another account's key cannot be revoked from here.
    const stranger = await server.newKey();
    assert.equal(
      errorCode(await browser.request('POST', `/dashboard/api/keys/${stranger.id}/revoke`)),
      'api_key_not_found',
    );
    assert.equal((await bearer(server.url, stranger.key)).status, 200);
  });

  it('rotates a key: the old one works through its grace period, or stops at once without one', async () => {
    const browser = new Browser(server.url);
    await browser.signIn('ada@example.com', PASSWORD);
    const first = await browser.request<{ key: string; api_key: { id: string } }>(
      'POST',
      '/dashboard/api/keys',
      {
        name: 'rotating',
        environment: 'development',
      },
    );
    // The grace runs from the moment the server rotated the key, somewhere between these two.
    const sentAt = Math.floor(Date.now() / 1000);
    const rotated = await browser.request<{
      key: string;
      api_key: { id: string; name: string; expires_at: number | null };
      previous: { id: string; expires_at: number };
    }>('POST', `/dashboard/api/keys/${first.body.api_key.id}/rotate`, { grace_period_hours: 24 });
    const answeredAt = Math.ceil(Date.now() / 1000);
    assert.equal(rotated.status, 201);
    assert.equal(rotated.body.api_key.name, 'rotating');
    assert.equal(rotated.body.api_key.expires_at, null);
    assert.equal(rotated.body.previous.id, first.body.api_key.id);
    const rotatedAt = rotated.body.previous.expires_at - 86_400;
    assert.ok(
      rotatedAt >= sentAt && rotatedAt <= answeredAt,
      `a grace of 24 h from ${rotatedAt}, not [${sentAt}, ${answeredAt}]`,
    );
    assert.equal(
      (await bearer(server.url, first.body.key)).status,
      200,
      'the old key works in its grace period',
    );
    assert.equal((await bearer(server.url, rotated.body.key)).status, 200);
    // The operator's listing tells a key in its grace period from one without an end.
    const listing = await runCli(['keys', 'list'], serverEnv(server.dataDir));
    const line = (id: string) => listing.stdout.split('\n').find((l) => l.startsWith(id)) ?? '';
    assert.match(line(first.body.api_key.id), /active until \d{4}-\d\d-\d\dT/);
    assert.match(line(rotated.body.api_key.id), / active /);

    const again = await browser.request<{ key: string }>(
      'POST',
      `/dashboard/api/keys/${rotated.body.api_key.id}/rotate`,
      {
        grace_period_hours: 0,
      },
    );
    assert.equal(
      (await bearer(server.url, rotated.body.key)).status,
      401,
      'no grace period: revoked at once',
    );
    assert.equal((await bearer(server.url, again.body.key)).status, 200);
    assert.equal(
      errorCode(
        await browser.request('POST', `/dashboard/api/keys/${rotated.body.api_key.id}/rotate`, {
          grace_period_hours: 1,
        }),
      ),
      'api_key_not_found',
    );
    const tooLong = await browser.request('POST', `/dashboard/api/keys/${first.body.api_key.id}/rotate`, {
      grace_period_hours: 721,
    });
    assert.equal(errorCode(tooLong), 'invalid_parameter');
  });

  it("sets a key's limits at creation and after, and the account's; a task past them is 402", async () => {
    const browser = new Browser(server.url);
    await browser.signIn('ada@example.com', PASSWORD);
    const created = await browser.request<{ key: string; api_key: Record<string, unknown> }>(
      'POST',
      '/dashboard/api/keys',
      { name: 'limited', environment: 'development', monthly_video_seconds: 7, monthly_budget: null },
    );
    assert.equal(created.status, 201);
    assert.deepEqual(
      [created.body.api_key.monthly_video_seconds, created.body.api_key.monthly_budget],
      [7, null],
    );
    const id = String(created.body.api_key.id);
    const bad = await browser.request('POST', `/dashboard/api/keys/${id}/limits`, { monthly_budget: -1 });
    assert.equal(bad.status, 400);
    const changed = await browser.request<{ api_key: Record<string, unknown> }>(
      'POST',
      `/dashboard/api/keys/${id}/limits`,
      { monthly_budget: 12.5 },
    );
    assert.deepEqual(
      [changed.body.api_key.monthly_video_seconds, changed.body.api_key.monthly_budget],
      [7, 12.5],
    );
    const withoutCsrf = await browser.request('POST', `/dashboard/api/keys/${id}/limits`, {}, { csrf: null });
    assert.equal(errorCode(withoutCsrf), 'invalid_csrf_token');

    const create = (key: string) =>
      fetch(`${server.url}/v1/videos/generations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(TEXT),
      });
    assert.equal((await create(created.body.key)).status, 200);
    assert.equal((await create(created.body.key)).status, 402);

    const limits = await browser.request<Record<string, unknown>>('GET', '/dashboard/api/limits');
    assert.equal(limits.status, 200);
    assert.deepEqual(limits.body.limits, { monthly_video_seconds: null, monthly_budget: null });
    // The whole account's month, every environment: the other tests' tasks count too.
    const month = limits.body.this_month as Record<'used' | 'reserved', { video_seconds: number }>;
    const usedOrReserved = month.used.video_seconds + month.reserved.video_seconds;
    assert.ok(month.reserved.video_seconds >= 4 || month.used.video_seconds >= 4);
    const set = await browser.request<Record<string, unknown>>('POST', '/dashboard/api/limits', {
      monthly_video_seconds: usedOrReserved,
    });
    assert.deepEqual(set.body.limits, { monthly_video_seconds: usedOrReserved, monthly_budget: null });
    const other = await browser.request<{ key: string }>('POST', '/dashboard/api/keys', {
      name: 'unlimited',
      environment: 'development',
    });
    const refused = await create(other.body.key);
    assert.equal(refused.status, 402);
    const body = (await refused.json()) as { error: { message: string } };
    assert.match(
      body.error.message,
      new RegExp(`^This account's monthly limit of ${usedOrReserved} video seconds would be exceeded`),
    );
    await browser.request('POST', '/dashboard/api/limits', { monthly_video_seconds: null });
  });

  it('checks every body as /v1 does: a value of another type or an unknown field is refused, nothing is coerced', async () => {
    const browser = new Browser(server.url);
    await browser.signIn('ada@example.com', PASSWORD);
    const made = await browser.request<{ api_key: { id: string } }>('POST', '/dashboard/api/keys', {
      name: 'strict',
      environment: 'development',
      monthly_video_seconds: 60,
    });
    const keyId = made.body.api_key.id;
    const accountLimits = (await browser.request('GET', '/dashboard/api/limits')).body.limits;

    const refusals: [string, string, Record<string, unknown>, string, string][] = [
      [
        'POST',
        '/dashboard/api/sign-in',
        { email: ['ada@example.com'], password: PASSWORD },
        'invalid_parameter',
        'email',
      ],
      [
        'POST',
        '/dashboard/api/sign-in',
        { email: 'ada@example.com', password: true },
        'invalid_parameter',
        'password',
      ],
      ['POST', '/dashboard/api/sign-in', { email: 'ada@example.com' }, 'missing_parameter', 'password'],
      [
        'POST',
        '/dashboard/api/sign-in',
        { email: 'ada@example.com', password: PASSWORD, remember: true },
        'unknown_parameter',
        'remember',
      ],
      [
        'PUT',
        '/dashboard/api/session/environment',
        { environment: ['production'] },
        'invalid_parameter',
        'environment',
      ],
      [
        'PUT',
        '/dashboard/api/session/environment',
        { environment: 'production', tab: 1 },
        'unknown_parameter',
        'tab',
      ],
      [
        'POST',
        '/dashboard/api/keys',
        { name: true, environment: 'development', monthly_video_seconds: 5 },
        'invalid_parameter',
        'name',
      ],
      [
        'POST',
        '/dashboard/api/keys',
        { name: 'coerced', environment: 'development', monthly_video_seconds: true },
        'invalid_parameter',
        'monthly_video_seconds',
      ],
      [
        'POST',
        '/dashboard/api/keys',
        { name: 'coerced', environment: ['development'] },
        'invalid_parameter',
        'environment',
      ],
      [
        'POST',
        '/dashboard/api/keys',
        { name: 'coerced', environment: 'development', monthly_budget: '5' },
        'invalid_parameter',
        'monthly_budget',
      ],
      [
        'POST',
        '/dashboard/api/keys',
        { name: 'coerced', environment: 'development', colour: 'red' },
        'unknown_parameter',
        'colour',
      ],
      ['POST', '/dashboard/api/keys', { environment: 'development' }, 'missing_parameter', 'name'],
      [
        'POST',
        `/dashboard/api/keys/${keyId}/rotate`,
        { grace_period_hours: '24' },
        'invalid_parameter',
        'grace_period_hours',
      ],
      [
        'POST',
        `/dashboard/api/keys/${keyId}/rotate`,
        { grace_period_hours: true },
        'invalid_parameter',
        'grace_period_hours',
      ],
      ['POST', `/dashboard/api/keys/${keyId}/rotate`, {}, 'missing_parameter', 'grace_period_hours'],
      [
        'POST',
        `/dashboard/api/keys/${keyId}/rotate`,
        { grace_period_hours: 1, notify: true },
        'unknown_parameter',
        'notify',
      ],
      [
        'POST',
        `/dashboard/api/keys/${keyId}/limits`,
        { monthly_video_seconds: true },
        'invalid_parameter',
        'monthly_video_seconds',
      ],
      [
        'POST',
        `/dashboard/api/keys/${keyId}/limits`,
        { monthly_video_seconds: '10' },
        'invalid_parameter',
        'monthly_video_seconds',
      ],
      [
        'POST',
        `/dashboard/api/keys/${keyId}/limits`,
        { monthly_budget: [5] },
        'invalid_parameter',
        'monthly_budget',
      ],
      [
        'POST',
        `/dashboard/api/keys/${keyId}/limits`,
        { monthly_seconds: 10 },
        'unknown_parameter',
        'monthly_seconds',
      ],
      [
        'POST',
        '/dashboard/api/limits',
        { monthly_video_seconds: false },
        'invalid_parameter',
        'monthly_video_seconds',
      ],
      ['POST', '/dashboard/api/limits', { monthly_budget: '' }, 'invalid_parameter', 'monthly_budget'],
      [
        'POST',
        '/dashboard/api/limits',
        { monthly_video_seconds: 10, currency: 'EUR' },
        'unknown_parameter',
        'currency',
      ],
    ];
    for (const [method, path, body, code, param] of refusals) {
      const what = `${method} ${path} ${JSON.stringify(body)}`;
      const answer = await browser.request(method, path, body);
      assert.equal(answer.status, 400, `${what}: ${JSON.stringify(answer.body)}`);
      const error = answer.body.error as Record<string, unknown>;
      assert.deepEqual(
        { code: error.code, type: error.type, param: error.param, request_id: error.request_id },
        {
          code,
          type: 'invalid_request_error',
          param,
          request_id: answer.headers.get('x-request-id'),
        },
        what,
      );
      assert.ok(
        typeof error.message === 'string' && error.message.includes(param),
        `${what}: ${error.message}`,
      );
    }

    // Nothing changed: no key was made, the key kept its limit and did not rotate, nor did the account's.
    const keys = (await browser.request<{ data: Record<string, unknown>[] }>('GET', '/dashboard/api/keys'))
      .body.data;
    assert.deepEqual(
      keys.filter((key) => key.name === 'true' || key.name === 'coerced'),
      [],
    );
    const strict = keys.filter((key) => key.name === 'strict');
    assert.deepEqual(
      strict.map((key) => [key.id, key.monthly_video_seconds, key.monthly_budget, key.expires_at]),
      [[keyId, 60, null, null]],
    );
    assert.deepEqual((await browser.request('GET', '/dashboard/api/limits')).body.limits, accountLimits);
    assert.equal((await browser.request('GET', '/dashboard/api/session')).body.environment, 'development');
  });

  it('reveals and rotates the webhook signing secret the service signs with', async () => {
    const browser = new Browser(server.url);
    await browser.signIn('ada@example.com', PASSWORD);
    const shown = await browser.request<{ secret: string; previous: unknown[] }>(
      'GET',
      '/dashboard/api/webhook-secret',
    );
    assert.match(shown.body.secret, /^whsec_/);
    const signing = await server.service.store.getWebhookSecrets(accountId);
    assert.equal(shown.body.secret, signing[0]?.secret);
    // The overlap runs from the moment the server rotated the secret, somewhere between these two.
    const sentAt = Math.floor(Date.now() / 1000);
    const rotated = await browser.request<{ secret: string; previous: { expires_at: number }[] }>(
      'POST',
      '/dashboard/api/webhook-secret/rotate',
    );
    const answeredAt = Math.ceil(Date.now() / 1000);
    assert.notEqual(rotated.body.secret, shown.body.secret);
    assert.equal(rotated.body.previous.length, shown.body.previous.length + 1);
    const rotatedAt = (rotated.body.previous[0]?.expires_at ?? 0) - 86_400;
    assert.ok(
      rotatedAt >= sentAt && rotatedAt <= answeredAt,
      `an overlap of 24 h from ${rotatedAt}, not [${sentAt}, ${answeredAt}]`,
    );
    assert.equal((await server.service.store.getWebhookSecrets(accountId))[0]?.secret, rotated.body.secret);
  });

  it('signs out: the cookie is cleared and the session no longer opens anything', async () => {
    const browser = new Browser(server.url);
    await browser.signIn('ada@example.com', PASSWORD);
    const signedOut = await browser.request('POST', '/dashboard/api/sign-out');
    assert.equal(signedOut.status, 204);
    assert.match(signedOut.headers.get('set-cookie') ?? '', /^videogen_session=;.*Expires=Thu, 01 Jan 1970/);
    assert.equal(errorCode(await browser.request('GET', '/dashboard/api/session')), 'not_signed_in');
    assert.equal(errorCode(await browser.request('GET', '/v1/tasks')), 'not_signed_in');
    assert.equal(errorCode(await browser.request('GET', '/dashboard/api/keys')), 'not_signed_in');
  });

  it('answers the session status with 200 signed in or not, without exposing the cookie', async () => {
    const browser = new Browser(server.url);
    const signedOut = await browser.request('GET', '/dashboard/api/session/status');
    assert.deepEqual(
      { status: signedOut.status, body: signedOut.body },
      { status: 200, body: { signed_in: false } },
    );
    browser.cookie = 'videogen_session=not-a-session-token';
    const unknown = await browser.request('GET', '/dashboard/api/session/status');
    assert.deepEqual(
      { status: unknown.status, body: unknown.body },
      { status: 200, body: { signed_in: false } },
    );

    const signedIn = await browser.signIn('ada@example.com', PASSWORD);
    const status = await browser.request('GET', '/dashboard/api/session/status');
    assert.equal(status.status, 200);
    assert.deepEqual(status.body, { signed_in: true, ...signedIn.body });
    assert.equal(status.headers.get('set-cookie'), null);

    await browser.request('POST', '/dashboard/api/sign-out');
    const after = await browser.request('GET', '/dashboard/api/session/status');
    assert.deepEqual(after.body, { signed_in: false });
  });

  it('serves the page with a content security policy that allows nothing inline or from elsewhere', async () => {
    const page = await fetch(`${server.url}/dashboard`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    const policy = page.headers.get('content-security-policy') ?? '';
    assert.match(policy, /script-src 'self'(;|$)/);
    assert.match(policy, /frame-ancestors 'none'/);
    const html = await page.text();
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
    assert.doesNotMatch(html, /(src|href)="(https?:)?\/\//, 'nothing from another host');
    const root = await fetch(`${server.url}/`, { redirect: 'manual' });
    assert.equal(root.status, 302);
    assert.equal(root.headers.get('location'), '/dashboard');
    assert.equal((await fetch(`${server.url}/dashboard/assets/../index.html`)).status, 404);
  });
});

describe("the dashboard's files, refused", () => {
  let server: TestService;
  before(async () => {
    server = await startTestService();
  });
  after(() => server.close());

  async function answer(path: string, headers: Record<string, string> = {}) {
    const response = await fetch(`${server.url}${path}`, { headers });
    const body = (await response.json()) as { error: { code: string; type: string; request_id: string } };
    assert.equal(body.error.request_id, response.headers.get('x-request-id'));
    return { status: response.status, code: body.error.code, headers: response.headers };
  }

  // Found by test/fuzz-routes.test.ts: each was a 500 internal_error.
  it('answers 404 not_found for a path that names no file: a directory, `..`, a NUL byte, a long name', async () => {
    for (const path of [
      '/dashboard/assets/',
      '/dashboard/assets/%00',
      '/dashboard/assets/%5c..%5cindex.html',
      `/dashboard/assets/${'a'.repeat(300)}`,
    ]) {
      assert.deepEqual(await answer(path).then(({ status, code }) => ({ status, code })), {
        status: 404,
        code: 'not_found',
      });
    }
  });

  it('answers 416 range_not_satisfiable with the size for a Range outside a file or the page', async () => {
    const { size } = await stat(fileURLToPath(new URL('../../dashboard/assets/app.js', import.meta.url)));
    for (const path of ['/dashboard/assets/app.js', '/dashboard']) {
      const refused = await answer(path, { range: `bytes=${size * 10}-` });
      assert.equal(refused.status, 416, path);
      assert.equal(refused.code, 'range_not_satisfiable');
      assert.match(refused.headers.get('content-range') ?? '', /^bytes \*\/\d+$/);
    }
    const refused = await answer('/dashboard/assets/app.js', { range: 'bytes=5-1' });
    assert.equal(refused.headers.get('content-range'), `bytes */${size}`);
    const part = await fetch(`${server.url}/dashboard/assets/app.js`, { headers: { range: 'bytes=0-1' } });
    assert.equal(part.status, 206);
    assert.equal((await part.arrayBuffer()).byteLength, 2);
  });

  it('answers 412 precondition_failed for a conditional GET that does not hold', async () => {
    const conditions: Record<string, string>[] = [
      { 'if-match': '"not-its-etag"' },
      { 'if-unmodified-since': 'Thu, 01 Jan 1970 00:00:00 GMT' },
    ];
    for (const headers of conditions) {
      assert.deepEqual(
        await answer('/dashboard/assets/app.js', headers).then(({ status, code }) => ({ status, code })),
        { status: 412, code: 'precondition_failed' },
      );
    }
    const file = await fetch(`${server.url}/dashboard/assets/app.js`);
    await file.arrayBuffer();
    const matching = await fetch(`${server.url}/dashboard/assets/app.js`, {
      headers: { 'if-match': file.headers.get('etag') ?? '' },
    });
    assert.equal(matching.status, 200);
    await matching.arrayBuffer();
  });
});

describe('dashboard sign-ins per client address', () => {
  it('refuses attempts past VIDEOGEN_SIGN_IN_ATTEMPTS_PER_MINUTE from one address with 429 and Retry-After', async () => {
    const server = await startTestService({ VIDEOGEN_SIGN_IN_ATTEMPTS_PER_MINUTE: '3' });
    try {
      await createOwnerAccount(server.service.store, { email: 'ada@example.com', password: PASSWORD });
      const browser = new Browser(server.url);
      for (let i = 0; i < 3; i++) {
        assert.equal((await browser.signIn(`guess-${i}@example.com`, 'a guess')).status, 401);
      }
      const refused = await browser.signIn('ada@example.com', PASSWORD);
      assert.equal(refused.status, 429);
      const error = refused.body.error as { code: string; type: string; param?: string; request_id: string };
      assert.equal(error.code, 'rate_limited');
      assert.equal(error.type, 'rate_limit_error');
      assert.equal(error.param, undefined, 'not a lockout of the email');
      assert.equal(error.request_id, refused.headers.get('x-request-id'));
      const retryAfter = Number(refused.headers.get('retry-after'));
      assert.ok(
        Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60,
        `Retry-After ${retryAfter}`,
      );
      assert.equal(refused.headers.get('set-cookie'), null);
    } finally {
      await server.close();
    }
  });
});

describe('dashboard cookie behind https', () => {
  it('is Secure when the public URL is https', async () => {
    const server = await startTestService({ VIDEOGEN_PUBLIC_URL: 'https://videos.example.com' });
    try {
      await createOwnerAccount(server.service.store, { email: 'ada@example.com', password: PASSWORD });
      // The public URL names the proxy in front; the server itself listens here.
      const address = server.service.app.server.address();
      assert.ok(address && typeof address === 'object');
      const signedIn = await new Browser(`http://127.0.0.1:${address.port}`).signIn(
        'ada@example.com',
        PASSWORD,
      );
      assert.match(signedIn.headers.get('set-cookie') ?? '', /; Secure/);
    } finally {
      await server.close();
    }
  });
});

describe('videogen accounts create', () => {
  let dataDir: string;
  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'videogen-accounts-'));
  });
  after(() => rm(dataDir, { recursive: true, force: true }));

  function run(args: string[], password: string, dir = dataDir) {
    return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        [CLI_PATH, 'accounts', ...args],
        { env: serverEnv(dir) },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
      child.stdin?.end(`${password}\n`);
    });
  }
  const create = (args: string[], password: string, dir = dataDir) => run(['create', ...args], password, dir);

  it('resets a password: the old one and every open session stop working, a lockout is lifted', async () => {
    const made = await create(['--email', 'reset@example.com'], PASSWORD);
    assert.equal(made.code, 0, made.stderr);
    const server = await startServer(serverEnv(dataDir));
    try {
      const before = new Browser(server.url);
      assert.equal((await before.signIn('reset@example.com', PASSWORD)).status, 200);
      for (let i = 0; i < 5; i++) await new Browser(server.url).signIn('reset@example.com', `guess ${i}`);
      assert.equal((await new Browser(server.url).signIn('reset@example.com', PASSWORD)).status, 429);

      const reset = await run(['reset-password', '--email', 'Reset@Example.com'], 'a brand new password');
      assert.equal(reset.code, 0, reset.stderr);
      assert.equal(errorCode(await before.request('GET', '/dashboard/api/keys')), 'not_signed_in');
      assert.equal(
        errorCode(await new Browser(server.url).signIn('reset@example.com', PASSWORD)),
        'invalid_credentials',
      );
      assert.equal(
        (await new Browser(server.url).signIn('reset@example.com', 'a brand new password')).status,
        200,
      );

      const unknown = await run(['reset-password', '--email', 'nobody@example.com'], 'a brand new password');
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /no account is owned by nobody@example\.com/);
      assert.equal((await run(['reset-password', '--email', 'reset@example.com'], 'short')).code, 1);
    } finally {
      await server.stop();
    }
  });

  it('gives the account of the first key, named by the first start, an owner who then sees its tasks', async () => {
    const fresh = await mkdtemp(join(tmpdir(), 'videogen-first-'));
    const server = await startServer(serverEnv(fresh));
    try {
      const key = await server.firstKey();
      assert.ok(key);
      const command = /npx videogen accounts create --email you@example\.com --account (acct_\w+)/.exec(
        server.stdout(),
      );
      assert.ok(command?.[1], 'the banner names the command');
      const made = await create(['--email', 'first@example.com', '--account', command[1]], PASSWORD, fresh);
      assert.equal(made.code, 0, made.stderr);
      const again = await create(['--email', 'other@example.com', '--account', command[1]], PASSWORD, fresh);
      assert.equal(again.code, 1, 'an account has one owner');

      const task = await fetch(`${server.url}/v1/videos/generations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(TEXT),
      }).then((response) => response.json() as Promise<PublicTask>);
      const browser = new Browser(server.url);
      assert.equal((await browser.signIn('first@example.com', PASSWORD)).status, 200);
      const listed = await browser.request<{ data: PublicTask[] }>('GET', '/v1/tasks');
      assert.deepEqual(
        listed.body.data.map((t) => t.id),
        [task.id],
      );
    } finally {
      await server.stop();
      await rm(fresh, { recursive: true, force: true });
    }
  });

  it('creates an owner from a password on stdin, who then signs in to a server on that store', async () => {
    const made = await create(['--email', 'Lin@Example.com'], PASSWORD);
    assert.equal(made.code, 0, made.stderr);
    assert.match(made.stdout, /^acct_[A-Za-z0-9]+\n$/);
    assert.match(made.stderr, /lin@example\.com can sign in/);

    const short = await create(['--email', 'short@example.com'], 'tiny');
    assert.equal(short.code, 1);
    assert.match(short.stderr, /at least 10 characters/);
    const twice = await create(['--email', 'lin@example.com'], PASSWORD);
    assert.equal(twice.code, 1);
    assert.match(twice.stderr, /exists already/);
    const usage = await create([], PASSWORD);
    assert.equal(usage.code, 2);

    const server = await startServer(serverEnv(dataDir));
    try {
      const signedIn = await new Browser(server.url).signIn('lin@example.com', PASSWORD);
      assert.equal(signedIn.status, 200);
      assert.equal((signedIn.body.account as { id: string }).id, made.stdout.trim());
    } finally {
      await server.stop();
    }
  });
});

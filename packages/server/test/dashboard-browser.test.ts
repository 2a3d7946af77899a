/**
 * The dashboard in a real browser (Debian's Chromium through playwright-core), against the whole service in
 * this process: signing in, the cookie's flags and CSRF, keys created on the page and used through the API,
 * revocation and rotation as the API sees them, the playground run to a playing video, the tasks pages with
 * live status and callback deliveries, the Usage page's charts, tables and CSV against the tasks and
 * GET /v1/usage, account and key limits that make creations past them 402, the webhook secret verifying a real
 * callback, a phone-width screen, labels and keyboard use. The same run writes the screenshots in
 * docs/images/dashboard/.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, ConsoleMessage, Locator, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { createOwnerAccount } from '../src/accounts/accounts.js';
import { MODEL_IDS } from '../src/domain/models.js';
import type { PublicTask } from '../src/domain/task.js';
import type { PublicModel, PublicModelList } from '../src/models/model-list.js';
import {
  chromiumSuite,
  launchChromium,
  newDashboardContext,
  newProblems,
  type PageProblems,
  screenshot,
  signIn,
  watchPage,
} from './helpers/browser.js';
import { writeTestAudio, writeTestImage } from './helpers/media-fixtures.js';
import { startTestService, type TestService } from './helpers/test-service.js';
import { until } from './helpers/until.js';
import { startWebhookReceiver, type WebhookReceiver } from './helpers/webhook-receiver.js';

/**
 * The browser globals that the functions run in the page use: this package compiles without the DOM library, so
 * they are declared here, for this module only, as far as these tests need them.
 */
interface PageElement {
  readonly textContent: string | null;
  readonly hidden: boolean;
  readonly disabled: boolean;
  readonly value: string;
  readonly naturalWidth: number;
  readonly tagName: string;
  readonly id: string;
  getAttribute(name: string): string | null;
}
declare const document: {
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): Iterable<PageElement> & { readonly length: number };
  readonly activeElement: PageElement | null;
  readonly cookie: string;
  readonly documentElement: { readonly scrollWidth: number };
};
declare const navigator: { readonly clipboard: { readText(): Promise<string> } };
declare function getComputedStyle(element: PageElement): { outlineStyle: string; outlineWidth: string };

const EMAIL = 'owner@example.com';
const PASSWORD = 'correct horse battery staple';
const RENDER_TIMEOUT_MS = 120_000;
const FAST_TEXT = 'videogen-2.0-fast-text-to-video';
/** The prices of this suite's engines file (per second of video), so that the Usage page has costs to show. */
const PRICES: Readonly<Record<string, Readonly<Record<string, number>>>> = {
  [FAST_TEXT]: { '480p': 0.05, '720p': 0.1 },
  'videogen-2.0-fast-image-to-video': { '480p': 0.125 },
};
const CURRENCY = 'USD';

interface FetchAnswer {
  status: number;
  body: { error?: { code: string } } & Record<string, unknown>;
}

/** A program's request with an API key: no cookie, no browser. */
async function withKey(base: string, key: string, path: string, body?: unknown): Promise<FetchAnswer> {
  const response = await fetch(`${base}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as FetchAnswer['body'] };
}

/** A request the page's own script context makes: same origin, so the session cookie goes with it. */
function fetchInPage(
  page: Page,
  path: string,
  init: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<FetchAnswer> {
  return page.evaluate(
    async ({ path, init }) => {
      const response = await fetch(path, {
        method: init.method ?? 'GET',
        headers: { 'content-type': 'application/json', ...init.headers },
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      });
      const raw = await response.text();
      return { status: response.status, body: raw ? JSON.parse(raw) : {} };
    },
    { path, init },
  );
}

/** Waits for the `<video>` under `scope` to have a frame, and reports what the element says about it. */
async function playableVideo(page: Page, scope: string) {
  const video = page.locator(`${scope} video`);
  await video.waitFor({ timeout: RENDER_TIMEOUT_MS });
  await video.evaluate(
    (element) =>
      new Promise((resolve) => {
        if (element.readyState >= 2 || element.error) resolve(undefined);
        element.addEventListener('loadeddata', resolve);
        element.addEventListener('error', resolve);
      }),
    undefined,
    { timeout: RENDER_TIMEOUT_MS },
  );
  return video.evaluate((element) => ({
    readyState: element.readyState as number,
    error: element.error ? (element.error.message as string) || String(element.error.code) : null,
    duration: element.duration as number,
    width: element.videoWidth as number,
    height: element.videoHeight as number,
  }));
}

/** The key shown once on the keys page. */
async function shownKey(page: Page, name: string): Promise<string> {
  const input = page.getByLabel(new RegExp(`^API key “${name}”`));
  await input.waitFor();
  return input.inputValue();
}

async function createKeyOnPage(page: Page, name: string, environment: 'development' | 'production') {
  await page.getByLabel('Name').fill(name);
  await page.getByLabel('Key environment', { exact: true }).selectOption(environment);
  await page.getByRole('button', { name: 'Create key' }).click();
  return shownKey(page, name);
}

/** Follows a link of the header's navigation and waits for the page's heading. */
async function openPage(page: Page, link: string, heading = link): Promise<void> {
  await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: link }).click();
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
}

/** The text of what `locator` finds. */
async function text(locator: Locator): Promise<string> {
  return (await locator.textContent()) ?? '';
}

function keyRow(page: Page, name: string) {
  return page.locator('tbody tr', { has: page.getByText(name, { exact: true }) });
}

/** The JSON in the playground's curl command (`-d '…'`). */
function curlBody(command: string): unknown {
  const match = /-d '([\s\S]*)'\s*$/.exec(command);
  assert.ok(match?.[1], `no -d '…' in ${command}`);
  return JSON.parse(match[1].replaceAll("'\\''", "'"));
}

/** One bucket of a usage report, as the Usage page shows it. */
interface UsageRow {
  key: string;
  tasks: number;
  video_seconds: number;
  cost: number;
}

/**
 * The usage of `tasks` worked out from the tasks themselves: the completed ones' `duration`, and their cost at
 * PRICES, summed per `keyOf` in key order (as `GET /v1/usage` orders its buckets).
 */
function usageOf(tasks: readonly PublicTask[], keyOf: (task: PublicTask) => string): UsageRow[] {
  const rows = new Map<string, UsageRow & { micros: number }>();
  for (const task of tasks.filter((t) => t.status === 'completed')) {
    const key = keyOf(task);
    const row = rows.get(key) ?? { key, tasks: 0, video_seconds: 0, cost: 0, micros: 0 };
    const price = PRICES[task.model]?.[task.quality] ?? 0;
    row.tasks += 1;
    row.video_seconds += task.duration;
    row.micros += Math.round(price * 1e6) * task.duration;
    rows.set(key, row);
  }
  return [...rows.values()]
    .sort((a, b) => (a.key < b.key ? -1 : 1))
    .map(({ micros, ...row }) => ({ ...row, cost: micros / 1e6 }));
}

/** `YYYY-MM-DD` (UTC) of Unix seconds. */
function utcDay(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 10);
}

/** The start of the UTC month `offset` months from now's, in Unix seconds. */
function monthStart(offset = 0): number {
  const now = new Date();
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + offset, 1) / 1000;
}

/** The message of a creation refused for a monthly limit of video seconds (as docs/api.md "Budgets" has it). */
function secondsLimitMessage(whose: 'account' | 'API key', limit: number, used: number, needed: number) {
  const resets = `${new Date(monthStart(1) * 1000).toISOString().slice(0, 19)}Z`;
  return (
    `This ${whose}'s monthly limit of ${limit} video seconds would be exceeded: ${used} s used or reserved ` +
    `this month, this task needs ${needed} s; the limit resets ${resets}.`
  );
}

const chromiumInstalled = await chromiumSuite();

describe('dashboard in a browser', { timeout: 600_000, ...chromiumInstalled }, () => {
  let server: TestService;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let receiver: WebhookReceiver;
  let fixtures: string;
  const problems: PageProblems = newProblems();
  /** A development key of the owner's account, made outside the dashboard (as `videogen keys create` would). */
  let developmentKey: string;
  /** The task that called the webhook receiver. */
  let calledBack: PublicTask;

  before(async () => {
    fixtures = await mkdtemp(join(tmpdir(), 'videogen-dashboard-'));
    // Every model on the local engine, as without an engines file, plus prices. JSON is YAML.
    const enginesFile = join(fixtures, 'engines.yaml');
    await writeFile(
      enginesFile,
      JSON.stringify({
        models: Object.fromEntries(MODEL_IDS.map((id) => [id, 'local'])),
        prices: { currency: CURRENCY, models: PRICES },
      }),
    );
    server = await startTestService({ VIDEOGEN_WORKER_CONCURRENCY: '1', VIDEOGEN_ENGINES_FILE: enginesFile });
    const { accountId } = await createOwnerAccount(server.service.store, {
      email: EMAIL,
      password: PASSWORD,
    });
    developmentKey = (await server.newKey('development', accountId)).key;
    receiver = await startWebhookReceiver();
    browser = await launchChromium();
    context = await newDashboardContext(browser, { width: 1280, height: 900 });
    page = watchPage(await context.newPage(), server.url, problems);
  });

  after(async () => {
    await browser?.close();
    await receiver?.close();
    await server?.close();
    await rm(fixtures, { recursive: true, force: true });
  });

  it('sends a signed-out visitor to sign-in, with no error in the console, and refuses a wrong password', async () => {
    const consoleErrors: string[] = [];
    const onConsole = (message: ConsoleMessage) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    };
    page.on('console', onConsole);
    await page.goto(`${server.url}/`);
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    page.off('console', onConsole);
    // The heading shows once the session probe has answered, and the browser reports a refused request to the
    // console as it arrives: a 401 from the probe would be listed by now.
    assert.deepEqual(consoleErrors, [], 'the sign-in page logged errors on load');
    assert.equal(new URL(page.url()).pathname, '/dashboard');
    assert.equal(new URL(page.url()).hash, '#/sign-in');
    assert.equal(await page.getByRole('navigation', { name: 'Dashboard' }).isVisible(), false);
    await screenshot(page, 'sign-in');

    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.match(await text(alert), /do not match/);
    assert.deepEqual(await context.cookies(), []);
  });

  it('signs in; the session cookie is HttpOnly and SameSite=Strict, out of the page script’s reach', async () => {
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
    assert.equal(new URL(page.url()).hash, '#/keys');
    assert.equal(await page.getByText(EMAIL).isVisible(), true);

    const cookies = await context.cookies();
    const session = cookies.find((cookie) => cookie.name === 'videogen_session');
    assert.ok(session, `cookies: ${JSON.stringify(cookies)}`);
    assert.equal(session.httpOnly, true);
    assert.equal(session.sameSite, 'Strict');
    assert.equal(session.path, '/');
    assert.ok(session.expires > Date.now() / 1000 + 6 * 24 * 3600, 'kept for days, not just this window');
    assert.equal(await page.evaluate(() => document.cookie.includes('videogen_session')), false);
  });

  it('refuses a POST with the cookie but without X-CSRF-Token (403 invalid_csrf_token), and changes nothing', async () => {
    const key = await fetchInPage(page, '/dashboard/api/keys', {
      method: 'POST',
      body: { name: 'forged', environment: 'development' },
    });
    assert.equal(key.status, 403);
    assert.equal(key.body.error?.code, 'invalid_csrf_token');
    const task = await fetchInPage(page, '/v1/videos/generations', {
      method: 'POST',
      body: { model: 'videogen-2.0-fast-text-to-video', prompt: 'forged' },
    });
    assert.equal(task.status, 403);
    assert.equal(task.body.error?.code, 'invalid_csrf_token');
    const forgedToken = await fetchInPage(page, '/dashboard/api/keys', {
      method: 'POST',
      body: { name: 'forged', environment: 'development' },
      headers: { 'x-csrf-token': 'not-the-token' },
    });
    assert.equal(forgedToken.status, 403);

    const keys = await fetchInPage(page, '/dashboard/api/keys');
    assert.equal(keys.status, 200);
    assert.deepEqual(
      (keys.body.data as { name: string }[]).filter((k) => k.name === 'forged'),
      [],
      'the refused requests created no key',
    );
    const tasks = await withKey(server.url, developmentKey, '/v1/tasks');
    assert.deepEqual(tasks.body.data, [], 'and no task');
  });

  it('creates a key shown once with a copy button; the API accepts it', async () => {
    const key = await createKeyOnPage(page, 'ci', 'development');
    assert.match(key, /^vg_dev_/);
    assert.match(await text(page.locator('.new-key')), /shown only once[\s\S]*secret manager/);

    await page.locator('.new-key').getByRole('button', { name: 'Copy' }).click();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), key);

    const row = keyRow(page, 'ci');
    const prefix = (await text(row.locator('td[data-label="Prefix"]'))).replace('…', '');
    assert.ok(prefix.length >= 8 && key.startsWith(prefix), `prefix ${prefix} of ${key}`);
    assert.equal(await text(row.locator('td[data-label="Environment"]')), 'development');
    assert.equal(await text(row.locator('td[data-label="Last used"]')), 'never');
    await screenshot(page, 'keys');

    const used = await withKey(server.url, key, '/v1/tasks');
    assert.equal(used.status, 200);
    assert.equal(used.body.object, 'list');

    await page.getByRole('button', { name: 'Done' }).click();
    assert.equal(await page.locator('.new-key').count(), 0, 'the key is not shown again');
    assert.equal(
      await page
        .locator('input')
        .evaluateAll((inputs, shown) => inputs.some((input) => input.value === shown), key),
      false,
      'no field holds the key any more',
    );
    assert.equal(
      await page.evaluate(() => document.activeElement?.tagName),
      'H1',
      'the focus goes back to the page, not to <body>, when Done disappears',
    );
    await openPage(page, 'Tasks');
    await openPage(page, 'API keys');
    const lastUsed = keyRow(page, 'ci').locator('td[data-label="Last used"] time');
    await lastUsed.waitFor();
    assert.equal(await page.getByText(key).count(), 0);
  });

  it('revokes a key after a confirmation (cancellable from the keyboard), and the API refuses it', async () => {
    const key = await createKeyOnPage(page, 'to-revoke', 'development');
    assert.equal((await withKey(server.url, key, '/v1/tasks')).status, 200);

    const revoke = page.getByRole('button', { name: 'Revoke to-revoke' });
    await revoke.focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Revoke “to-revoke”?' });
    await dialog.waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    assert.equal(
      await revoke.evaluate((button) => button === button.ownerDocument.activeElement),
      true,
      'focus returns',
    );
    assert.equal((await withKey(server.url, key, '/v1/tasks')).status, 200, 'cancelled: still valid');

    await revoke.click();
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await keyRow(page, 'to-revoke').waitFor({ state: 'detached' });
    const refused = await withKey(server.url, key, '/v1/tasks');
    assert.equal(refused.status, 401);
    assert.equal(refused.body.error?.code, 'invalid_api_key');
  });

  it('rotates a key: the new key works at once and the old one through its grace period', async () => {
    const old = await createKeyOnPage(page, 'deploy', 'production');
    assert.match(old, /^vg_prod_/);
    await page.getByRole('button', { name: 'Done' }).click();

    await page.getByRole('button', { name: 'Rotate deploy' }).click();
    const dialog = page.getByRole('dialog', { name: 'Rotate “deploy”?' });
    await dialog.getByLabel('Old key keeps working for').selectOption('1');
    await dialog.getByRole('button', { name: 'Rotate key' }).click();
    const rotated = await shownKey(page, 'deploy');
    assert.match(rotated, /^vg_prod_/);
    assert.notEqual(rotated, old);
    assert.match(await text(page.locator('.new-key')), /old key keeps working until/);

    assert.equal((await withKey(server.url, rotated, '/v1/tasks')).status, 200);
    assert.equal((await withKey(server.url, old, '/v1/tasks')).status, 200, 'within its grace period');
    const rows = keyRow(page, 'deploy');
    assert.equal(await rows.count(), 2);
    assert.equal(await rows.locator('td[data-label="Expires"] time').count(), 1, 'the old one expires');
  });

  it('rotates a key without a grace period: the old key is refused at once', async () => {
    const old = await createKeyOnPage(page, 'worker', 'development');
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('button', { name: 'Rotate worker' }).click();
    const dialog = page.getByRole('dialog', { name: 'Rotate “worker”?' });
    await dialog.getByLabel('Old key keeps working for').selectOption('0');
    await dialog.getByRole('button', { name: 'Rotate key' }).click();
    const rotated = await shownKey(page, 'worker');
    assert.match(await text(page.locator('.new-key')), /old key has been revoked/);
    assert.equal((await withKey(server.url, rotated, '/v1/tasks')).status, 200);
    const refused = await withKey(server.url, old, '/v1/tasks');
    assert.equal(refused.status, 401);
    assert.equal(refused.body.error?.code, 'invalid_api_key');
    assert.equal(await keyRow(page, 'worker').count(), 1);
    await page.getByRole('button', { name: 'Done' }).click();
  });

  it('runs the playground in text mode to a playing video of the requested duration', async () => {
    await openPage(page, 'Playground');
    const prompt = 'A red kite rising over green hills at sunset';
    await page.getByLabel('Prompt').fill(prompt);
    assert.equal(await page.getByLabel('Fast variant').isChecked(), true);
    await page.getByLabel('Duration (seconds)').fill('4');
    await page.getByLabel('Quality').selectOption('480p');
    await page.getByLabel('Aspect ratio').selectOption('1:1');

    const command = await text(page.getByLabel('Equivalent curl command'));
    assert.ok(command.includes(`curl -s ${server.url}/v1/videos/generations`), command);
    assert.ok(command.includes('-H "Authorization: Bearer $VIDEOGEN_API_KEY"'), command);
    const body = curlBody(command);
    assert.deepEqual(body, {
      model: 'videogen-2.0-fast-text-to-video',
      prompt,
      duration: 4,
      quality: '480p',
      aspect_ratio: '1:1',
    });
    // The command's body is a request the API takes as it is.
    const fromCurl = await withKey(server.url, developmentKey, '/v1/videos/generations', body);
    assert.equal(fromCurl.status, 200, JSON.stringify(fromCurl.body));

    await page.getByRole('button', { name: 'Generate video' }).click();
    const video = await playableVideo(page, '.run');
    assert.equal(video.error, null);
    assert.ok(video.readyState >= 2);
    assert.ok(Math.abs(video.duration - 4) < 0.25, `duration ${video.duration}`);
    assert.deepEqual([video.width, video.height], [480, 480]);
    assert.equal(await page.locator('.run progress').evaluate((bar) => bar.value), 100);
    // A frame from the middle of the video for the screenshot, rather than the first.
    await page.locator('.run video').evaluate(
      (element) =>
        new Promise((resolve) => {
          element.pause();
          element.addEventListener('seeked', resolve, { once: true });
          element.currentTime = 1.5;
        }),
    );
    await screenshot(page, 'playground');
  });

  it('runs the playground in image mode: uploads the image, previews it, plays the result', async () => {
    const image = join(fixtures, 'first frame.png');
    await writeTestImage(image, { width: 320, height: 480, colour: [30, 120, 200], accent: [250, 200, 40] });
    await page.getByLabel('Image to video').check();
    assert.equal(new URL(page.url()).hash, '#/playground?mode=image');
    await page.getByLabel('Prompt').fill('The camera slowly pushes in on image 1');
    await page.getByLabel('Duration (seconds)').fill('4');
    await page.getByLabel('Quality').selectOption('480p');
    // Left at the server's default (adaptive for image models): the request does not name it.
    assert.equal(await page.getByLabel('Aspect ratio').inputValue(), '');
    await page.getByLabel('First frame', { exact: true }).setInputFiles(image);

    const preview = page.getByRole('img', { name: 'Preview of first frame.png' });
    await preview.waitFor();
    await page.waitForFunction(() => document.querySelector('.previews img')?.naturalWidth === 320);
    assert.match((await preview.getAttribute('src')) ?? '', /^blob:/);
    const command = await text(page.getByLabel('Equivalent curl command'));
    assert.ok(command.includes(`curl -s ${server.url}/v1/files`), command);
    assert.ok(command.includes("-F 'file=@first frame.png'"), command);
    assert.equal('aspect_ratio' in (curlBody(command) as Record<string, unknown>), false, command);
    assert.equal(await page.getByLabel('Fast variant').isChecked(), true);
    await page.getByLabel('Fast variant').uncheck();
    await page.getByLabel('Fast variant').check();

    await page.getByRole('button', { name: 'Generate video' }).click();
    const video = await playableVideo(page, '.run');
    assert.equal(video.error, null);
    assert.ok(Math.abs(video.duration - 4) < 0.25, `duration ${video.duration}`);
    assert.deepEqual([video.width, video.height], [480, 640], 'adaptive: the 2:3 image snaps to 3:4');
    const uploaded = curlBody(await text(page.getByLabel('Equivalent curl command'))) as {
      image_urls: string[];
    };
    assert.equal(uploaded.image_urls.length, 1);
    assert.match(uploaded.image_urls[0] ?? '', new RegExp(`^${server.url}/v1/files/file-[^/]+/content$`));
    const file = await withKey(
      server.url,
      developmentKey,
      new URL(uploaded.image_urls[0] ?? '').pathname.replace(/\/content$/, ''),
    );
    assert.equal(file.status, 200);
    assert.equal(file.body.kind, 'image');
    assert.equal(file.body.filename, 'first frame.png');
  });

  it('offers the models as GET /v1/models lists them: every one can run, for 4 to 15 seconds', async () => {
    await openPage(page, 'API keys');
    const listed = page.waitForResponse((response) => new URL(response.url()).pathname === '/v1/models');
    await openPage(page, 'Playground');
    assert.equal((await listed).status(), 200);
    await page.waitForFunction(() => !document.querySelector('form[aria-busy="true"]'));
    const form = page.locator('.playground-form');
    // The worker pool registers as the service starts; were the list read before that, the page reads it again.
    await page.waitForFunction(
      () => !document.querySelector('.playground-form')?.textContent?.includes('unavailable'),
      undefined,
      { timeout: 30_000 },
    );
    for (const mode of ['Text to video', 'Image to video', 'Reference to video']) {
      await form.getByLabel(mode).check();
      for (const fast of [true, false]) {
        await form.getByLabel('Fast variant').setChecked(fast);
        const shown = await text(form);
        assert.doesNotMatch(shown, /unavailable|cannot run now/, `${mode}, fast: ${fast}`);
      }
    }
    const duration = form.getByLabel('Duration (seconds)');
    assert.deepEqual([await duration.getAttribute('min'), await duration.getAttribute('max')], ['4', '15']);
    assert.deepEqual(
      await duration.evaluate((input) =>
        [...input.list.options].map((option: { value: string }) => Number(option.value)),
      ),
      [4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    );
    assert.equal(await page.locator('.error-box').isVisible(), false);
    await form.getByLabel('Text to video').check();
    await form.getByLabel('Fast variant').check();
  });

  it('marks a model that cannot run, offers only what its engines take, and falls back when the list fails', async () => {
    const models = '**/v1/models';
    // Exact: each file field has a list of previews labelled after it.
    const AUDIO = /^Audio \(up to 3; the first is the soundtrack\)$/;
    try {
      // The service's own answer, with two models changed as an operator's routes and circuits could make them.
      await page.route(models, async (route) => {
        const response = await route.fetch();
        const list = (await response.json()) as PublicModelList;
        const data = list.data.map((model): PublicModel => {
          if (model.id === 'videogen-2.0-image-to-video')
            return { ...model, inputs: { image_urls: { min: 1, max: 1 } } };
          if (model.id !== 'videogen-2.0-fast-reference-to-video') return model;
          const { audio_urls: _, ...inputs } = model.inputs;
          return {
            ...model,
            inputs,
            durations: [5, 10],
            qualities: ['480p', '720p'],
            available: false,
            unavailable_reason: 'Every engine of this model is unavailable (circuit open).',
          };
        });
        await route.fulfill({ response, json: { ...list, data } });
      });
      await openPage(page, 'API keys');
      let listed = page.waitForResponse((response) => new URL(response.url()).pathname === '/v1/models');
      await openPage(page, 'Playground');
      await listed;
      await page.waitForFunction(() => !document.querySelector('form[aria-busy="true"]'));
      const form = page.locator('.playground-form');
      const label = (name: string) => text(form.locator('label', { hasText: name }));

      await form.getByLabel('Reference to video').check();
      assert.equal(await form.getByLabel('Fast variant').isChecked(), true);
      assert.equal(await label('Reference to video'), 'Reference to video (unavailable)');
      assert.equal(await label('Fast variant'), 'Fast variant (unavailable)');
      assert.equal(await label('Text to video'), 'Text to video');
      assert.match(await text(form.locator('.model-id + span')), /\(unavailable\)/);
      assert.match(
        await text(form.locator('div[role="status"]')),
        /videogen-2\.0-fast-reference-to-video cannot run now: Every engine of this model is unavailable \(circuit open\)\. You can still create the task/,
      );
      assert.equal(await page.getByRole('button', { name: 'Generate video' }).isEnabled(), true);
      assert.equal(await form.getByLabel(/^Images \(up to 9\)$/).count(), 1);
      assert.equal(await form.getByLabel(/^Videos \(up to 3\)$/).count(), 1);
      assert.equal(await form.getByLabel(AUDIO).count(), 0, 'its engine takes no audio');
      const duration = form.getByLabel('Duration (seconds)');
      assert.deepEqual([await duration.getAttribute('min'), await duration.getAttribute('max')], ['5', '10']);
      await duration.fill('7');
      assert.equal(await duration.evaluate((input) => input.validity.valid), false, '7 s is not offered');
      await duration.fill('10');
      assert.equal(await duration.evaluate((input) => input.validity.valid), true);
      assert.deepEqual(
        await form
          .getByLabel('Quality')
          .locator('option')
          .evaluateAll((options) => options.map((option) => option.value as string)),
        ['', '480p', '720p'],
        'the server default, then what the model takes',
      );

      // The standard model of the mode runs, and takes audio.
      await form.getByLabel('Fast variant').uncheck();
      assert.equal(await label('Reference to video'), 'Reference to video');
      assert.equal(await label('Fast variant'), 'Fast variant (unavailable)', 'what checking it would pick');
      assert.equal(await text(form.locator('.model-id + span')), '');
      assert.equal(await text(form.locator('div[role="status"]')), '');
      assert.equal(await form.getByLabel(AUDIO).count(), 1);
      assert.equal(await duration.getAttribute('max'), '15');

      // The standard image model's engine takes no last frame; the fast one's does.
      await form.getByLabel('Image to video').check();
      assert.equal(await form.getByLabel('First frame', { exact: true }).count(), 1);
      assert.equal(
        await form.getByLabel('Last frame (optional)', { exact: true }).count(),
        0,
        'no last frame',
      );
      await form.getByLabel('Fast variant').check();
      assert.equal(await form.getByLabel('Last frame (optional)', { exact: true }).count(), 1);

      // Without the list, the page says so and offers nothing (it has no catalogue of its own) until it has it.
      await page.unroute(models);
      await page.route(models, (route) =>
        route.fulfill({
          status: 503,
          json: { error: { code: 'overloaded', message: 'The server is busy.', type: 'server_error' } },
        }),
      );
      await openPage(page, 'API keys');
      listed = page.waitForResponse((response) => new URL(response.url()).pathname === '/v1/models');
      await openPage(page, 'Playground');
      await listed;
      const errorBox = page.locator('.error-box');
      await errorBox.waitFor();
      assert.match(await text(errorBox), /The models could not be listed[\s\S]*The server is busy\./);
      assert.equal(await form.locator('input, select, textarea').count(), 0);
      await page.unroute(models);
      await form.getByRole('button', { name: 'Try again' }).click();
      await form.getByLabel('Reference to video').check();
      assert.equal(await errorBox.isVisible(), false);
      assert.doesNotMatch(await text(form), /unavailable/);
      assert.equal(await form.getByLabel(AUDIO).count(), 1);
      assert.deepEqual([await duration.getAttribute('min'), await duration.getAttribute('max')], ['4', '15']);
      await form.getByLabel('Text to video').check();
    } finally {
      await page.unroute(models);
    }
  });

  it('shows a field the server refuses beside that field, and creates nothing', async () => {
    await openPage(page, 'Playground');
    await page.waitForFunction(() => !document.querySelector('form[aria-busy="true"]'));
    const form = page.locator('.playground-form');
    await form.getByLabel('Text to video').check();
    await form.getByLabel('Prompt').fill('A seed past the largest one');
    await form.getByText('More options').click();
    const seed = form.getByLabel('Seed');
    // The page keeps no copy of the server's limits: the largest seed is the server's to check.
    await seed.fill('4294967296');
    await form.getByText('More options').click();
    assert.equal(await seed.isVisible(), false, 'closed again');
    const taskCount = async () =>
      ((await withKey(server.url, developmentKey, '/v1/tasks?limit=100')).body.data as PublicTask[]).length;
    const tasksBefore = await taskCount();
    const refused = page.waitForResponse(
      (response) => new URL(response.url()).pathname === '/v1/videos/generations',
    );
    await page.getByRole('button', { name: 'Generate video' }).click();
    const answer = (await (await refused).json()) as {
      error: { code: string; param: string; message: string };
    };
    assert.deepEqual([answer.error.code, answer.error.param], ['invalid_parameter', 'seed']);

    const message = form.locator('.field-error');
    await message.waitFor();
    assert.equal(await text(message), answer.error.message);
    assert.equal(await seed.isVisible(), true, 'its section opened to show it');
    assert.equal(await seed.getAttribute('aria-invalid'), 'true');
    const describedBy = ((await seed.getAttribute('aria-describedby')) ?? '').split(' ');
    assert.ok(describedBy.includes((await message.getAttribute('id')) ?? 'none'), describedBy.join(' '));
    assert.ok(describedBy.length === 2, 'the hint and the error');
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('name')), 'seed');
    assert.equal(await taskCount(), tasksBefore);

    // Another refused field: the error moves there, and the seed is as before it.
    await seed.fill('');
    await form.getByLabel('Callback URL').fill('ftp://example.com/hook');
    await page.getByRole('button', { name: 'Generate video' }).click();
    const callbackUrl = form.getByLabel('Callback URL');
    await page.waitForFunction(
      () => document.querySelector('[name="callback_url"]')?.getAttribute('aria-invalid') === 'true',
    );
    assert.equal(await form.locator('.field-error').count(), 1);
    assert.match(await text(form.locator('.field-error')), /callback_url/);
    assert.equal(await seed.getAttribute('aria-invalid'), null);
    assert.equal(((await seed.getAttribute('aria-describedby')) ?? '').split(' ').length, 1, 'the hint only');
    assert.match(
      (await callbackUrl.getAttribute('aria-describedby')) ?? '',
      new RegExp(`${await form.locator('.field-error').getAttribute('id')}$`),
    );
    assert.equal(await taskCount(), tasksBefore);
    await callbackUrl.fill('');

    // A file refused by its index: `image_urls[1]` is the last frame, not the first.
    const image = join(fixtures, 'first frame.png');
    const audio = join(fixtures, 'not a frame.wav');
    await writeTestAudio(audio, { seconds: 0.5 });
    await form.getByLabel('Image to video').check();
    await form.getByLabel('Fast variant').check();
    await form.getByLabel('Prompt').fill('image 1 turns into image 2');
    const first = form.getByLabel('First frame', { exact: true });
    const last = form.getByLabel('Last frame (optional)', { exact: true });
    await first.setInputFiles(image);
    await last.setInputFiles(audio);
    await page.getByRole('button', { name: 'Generate video' }).click();
    await page.waitForFunction(
      () => document.querySelector('[name="last"]')?.getAttribute('aria-invalid') === 'true',
    );
    assert.match(await text(form.locator('.field-error')), /^image_urls\[1\]: .* is audio, not image\.$/);
    assert.equal(await first.getAttribute('aria-invalid'), null);
    assert.equal(await taskCount(), tasksBefore);
    await form.getByLabel('Text to video').check();
  });

  it('shows a task live: status and progress, the video, the request, the task JSON and the callback deliveries', async () => {
    const created = await withKey(server.url, developmentKey, '/v1/videos/generations', {
      model: 'videogen-2.0-fast-text-to-video',
      prompt: 'A paper boat on a pond',
      duration: 4,
      quality: '480p',
      callback_url: `${receiver.url}/hooks/videogen`,
    });
    assert.equal(created.status, 200);
    const taskId = created.body.id as string;
    await page.goto(`${server.url}/dashboard#/tasks/${taskId}`);
    await page.getByRole('heading', { level: 1, name: 'Task' }).waitFor();

    // No reload: the event stream brings the page to the end.
    await page.locator('.summary .status-completed').waitFor({ timeout: RENDER_TIMEOUT_MS });
    const video = await playableVideo(page, 'main');
    assert.equal(video.error, null);
    assert.ok(Math.abs(video.duration - 4) < 0.25, `duration ${video.duration}`);
    assert.equal(await page.locator('.summary progress').evaluate((bar) => bar.value), 100);

    const request = JSON.parse(await text(page.getByRole('region', { name: 'Request' }).locator('pre')));
    assert.equal(request.prompt, 'A paper boat on a pond');
    assert.equal(request.callback_url, `${receiver.url}/hooks/videogen`);
    const shownTask = JSON.parse(
      await text(page.getByRole('region', { name: 'Task JSON' }).locator('pre')),
    ) as PublicTask;
    const apiTask = await withKey(server.url, developmentKey, `/v1/tasks/${taskId}`);
    assert.equal(shownTask.id, taskId);
    assert.equal(shownTask.status, 'completed');
    assert.equal(shownTask.completed_at, apiTask.body.completed_at);

    const received = await receiver.waitFor(2, 60_000);
    calledBack = JSON.parse(received[1]?.body ?? '{}') as PublicTask;
    const completedDelivery = page.locator('.delivery', { hasText: 'task.completed' });
    await completedDelivery.locator('.delivery-succeeded').waitFor({ timeout: 30_000 });
    assert.match(await text(completedDelivery), /HTTP 200/);
    assert.match(
      await text(page.locator('.delivery', { hasText: 'task.processing' })),
      /succeeded[\s\S]*HTTP 200/,
    );
    await screenshot(page, 'task');

    // Sending the callback again follows the new delivery to its end, though every earlier one had ended.
    await page.getByRole('button', { name: 'Send the callback again' }).click();
    await page.locator('.delivery').nth(2).locator('.delivery-succeeded').waitFor({ timeout: 30_000 });
    assert.equal(await page.locator('.delivery').count(), 3);
  });

  it('cancels a running task and then deletes it, each after a confirmation', async () => {
    const created = await withKey(server.url, developmentKey, '/v1/videos/generations', {
      model: 'videogen-2.0-text-to-video',
      prompt: 'A long one, to be cancelled',
      duration: 15,
      quality: '1080p',
    });
    const taskId = created.body.id as string;
    await page.goto(`${server.url}/dashboard#/tasks/${taskId}`);
    await page.getByRole('heading', { level: 1, name: 'Task' }).waitFor();
    await page.getByRole('button', { name: 'Cancel task' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel task' }).click();
    await page.locator('.summary .status-failed').waitFor();
    const cancelled = await withKey(server.url, developmentKey, `/v1/tasks/${taskId}`);
    assert.equal(cancelled.body.status, 'failed');
    assert.equal((cancelled.body.error as { code: string } | undefined)?.code, 'cancelled');

    await page.getByRole('button', { name: 'Delete task' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete task' }).click();
    await page.waitForURL((url) => url.hash.startsWith('#/tasks') && !url.hash.includes(taskId));
    const deleted = await withKey(server.url, developmentKey, `/v1/tasks/${taskId}`);
    assert.equal(deleted.status, 404);
  });

  it('shows the final callback of a task that ended while the list of its callbacks was on its way', async () => {
    const created = await withKey(server.url, developmentKey, '/v1/videos/generations', {
      model: 'videogen-2.0-text-to-video',
      prompt: 'A long one, cancelled while its callbacks are read',
      duration: 15,
      quality: '1080p',
      callback_url: `${receiver.url}/hooks/videogen`,
    });
    const taskId = created.body.id as string;
    const path = `/v1/tasks/${taskId}`;
    // Its task.processing callback delivered, so the list read below has nothing pending in it.
    await until(async () => {
      const listed = await withKey(server.url, developmentKey, `${path}/deliveries`);
      const deliveries = listed.body.data as { event: string; status: string }[];
      return deliveries.some((d) => d.event === 'task.processing' && d.status === 'succeeded');
    }, 'the task.processing callback delivered');

    // The page's first read of the list is answered as the server had it then, but only once the page has seen
    // the task end: the order in which a slow answer and the task's event stream can arrive.
    let fetched = () => {};
    let timer: NodeJS.Timeout | undefined;
    const listFetched = new Promise<void>((resolve, reject) => {
      fetched = resolve;
      timer = setTimeout(() => reject(new Error('the page did not ask for the list within 30 s')), 30_000);
    }).finally(() => clearTimeout(timer));
    // Awaited after the page has loaded: until then a timeout is not an unhandled rejection.
    listFetched.catch(() => {});
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let first = true;
    const list = `**${path}/deliveries`;
    await page.route(list, async (route) => {
      if (!first) return route.continue();
      first = false;
      const answer = await route.fetch();
      fetched();
      await held;
      await route.fulfill({ response: answer });
    });
    try {
      await page.goto(`${server.url}/dashboard#/tasks/${taskId}`);
      await listFetched;
      const cancelled = await withKey(server.url, developmentKey, `${path}/cancel`, {});
      assert.equal(cancelled.body.status, 'failed');
      await page.locator('.summary .status-failed').waitFor();
      release();
      // The stale list holds task.processing alone; the page reads the list again and shows the final callback.
      await page
        .locator('.delivery', { hasText: 'task.failed' })
        .locator('.delivery-succeeded')
        .waitFor({ timeout: 30_000 });
    } finally {
      release();
      await page.unroute(list);
      // Gone, whatever happened, so that the tests after this one list the tasks they expect.
      await fetch(`${server.url}${path}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${developmentKey}` },
      });
    }
  });

  it('lists the tasks of the session’s environment with filters, and switches environment', async () => {
    await openPage(page, 'Tasks');
    const listed = await withKey(server.url, developmentKey, '/v1/tasks?limit=100');
    const ids = (listed.body.data as PublicTask[]).map((task) => task.id);
    assert.equal(ids.length, 4, 'two from the playground, one from its curl command, one with a callback');
    await page.locator(`tr[data-task-id="${ids[0]}"]`).waitFor();
    assert.deepEqual(
      await page
        .locator('tbody tr')
        .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-task-id'))),
      ids,
      'newest first, as the API lists them',
    );
    // Tasks still rendering become final without a reload.
    await page.waitForFunction(
      () =>
        document.querySelectorAll('tbody .status-completed').length ===
        document.querySelectorAll('tbody tr').length,
      undefined,
      { timeout: RENDER_TIMEOUT_MS },
    );
    await screenshot(page, 'tasks');

    await page.getByLabel('Model').selectOption('videogen-2.0-fast-image-to-video');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/#\/tasks\?model=videogen-2\.0-fast-image-to-video$/);
    const imageTasks = (listed.body.data as PublicTask[]).filter(
      (t) => t.model === 'videogen-2.0-fast-image-to-video',
    );
    assert.equal(imageTasks.length, 1);
    // The unfiltered table stays on screen until the filtered page replaces it: wait for exactly the filtered rows.
    await page.waitForFunction(
      (expected) => {
        const shown = [...document.querySelectorAll('tbody tr')].map((row) =>
          row.getAttribute('data-task-id'),
        );
        return shown.length === expected.length && shown.every((id, index) => id === expected[index]);
      },
      imageTasks.map((t) => t.id),
    );

    await page.getByLabel('Status').selectOption('failed');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByText('No tasks match these filters.').waitFor();

    await page.getByRole('link', { name: 'Clear' }).click();
    await page.locator('tbody tr').first().waitFor();
    const switcher = page.getByLabel('Environment', { exact: true });
    await switcher.focus();
    await switcher.selectOption('production');
    await page.getByText('No tasks yet.').waitFor();
    assert.equal(
      await page.evaluate(() => document.activeElement?.id),
      'environment-select',
      'changing the environment redraws the page but leaves the focus on the switcher',
    );
    assert.equal(await page.locator('#production-banner').isVisible(), true);
    const session = await fetchInPage(page, '/dashboard/api/session');
    assert.equal(session.body.environment, 'production');
    await switcher.selectOption('development');
    await page.locator('tbody tr').first().waitFor();
    assert.equal(await page.locator('#production-banner').isVisible(), false);
  });

  it('offers the model filter from GET /v1/models, not from a list of its own', async () => {
    const models = '**/v1/models';
    // In the server's order, which the filter keeps.
    const listedIds = ['videogen-2.0-image-to-video', 'videogen-2.0-fast-text-to-video'];
    try {
      // The service's answer narrowed to two models: the filter offers exactly those.
      await page.route(models, async (route) => {
        const response = await route.fetch();
        const list = (await response.json()) as PublicModelList;
        const data = list.data.filter((model) => listedIds.includes(model.id));
        await route.fulfill({ response, json: { ...list, data } });
      });
      await openPage(page, 'API keys');
      await openPage(page, 'Tasks');
      const filter = page.getByLabel('Model');
      const offered = () =>
        filter.locator('option').evaluateAll((options) => options.map((option) => option.value as string));
      await page.waitForFunction(() => document.querySelectorAll('select[name="model"] option').length > 1);
      assert.deepEqual(await offered(), ['', ...listedIds]);

      // Without the list, the model filtered on stays offered, and the page says why the others are not.
      await page.unroute(models);
      await page.route(models, (route) =>
        route.fulfill({
          status: 503,
          json: { error: { code: 'overloaded', message: 'The server is busy.', type: 'api_error' } },
        }),
      );
      await page.goto(`${server.url}/dashboard#/tasks?model=videogen-2.0-fast-image-to-video`);
      await page.locator('.error-box').filter({ hasText: 'The models could not be listed' }).waitFor();
      assert.deepEqual(await offered(), ['', 'videogen-2.0-fast-image-to-video']);
      assert.equal(await filter.inputValue(), 'videogen-2.0-fast-image-to-video');
    } finally {
      await page.unroute(models);
    }
  });

  it('shows “Any model” on an unfiltered list and the model filtered on after a reload, once the models are listed', async () => {
    const filter = page.getByLabel('Model');
    const listed = () =>
      page.waitForFunction(() => document.querySelectorAll('select[name="model"] option').length > 2);
    await page.goto(`${server.url}/dashboard#/tasks`);
    await page.getByRole('heading', { level: 1, name: 'Tasks' }).waitFor();
    await listed();
    assert.equal(await filter.inputValue(), '');
    assert.equal(await text(filter.locator('option:checked')), 'Any model');
    // Applying another filter adds no model to it.
    await page.getByLabel('Status').selectOption('completed');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/#\/tasks\?status=completed$/);

    const filtered = 'videogen-2.0-fast-image-to-video';
    await page.goto(`${server.url}/dashboard#/tasks?model=${filtered}`);
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Tasks' }).waitFor();
    await listed();
    assert.equal(await filter.inputValue(), filtered);
  });

  it('shows usage per day and per model, with charts and tables, over a chosen range, and downloads it as CSV', async () => {
    // Every task of the environment has ended (the test before waited for it): the usage is settled.
    const listed = await withKey(server.url, developmentKey, '/v1/tasks?limit=100');
    const tasks = listed.body.data as PublicTask[];
    const completed = tasks.filter((t) => t.status === 'completed');
    assert.ok(completed.length >= 4, `completed: ${completed.length} of ${tasks.length}`);
    const byDay = usageOf(tasks, (t) => utcDay(t.created_at));
    const byModel = usageOf(tasks, (t) => t.model);
    const [total] = usageOf(tasks, () => 'total');
    assert.ok(total);
    assert.equal(byModel.length, 2, 'fast text and fast image, at different prices');
    // GET /v1/usage, as a program reads it with a key, gives the same figures.
    for (const [groupBy, expected] of [
      ['day', byDay],
      ['model', byModel],
    ] as const) {
      const report = await withKey(server.url, developmentKey, `/v1/usage?group_by=${groupBy}`);
      assert.equal(report.status, 200);
      assert.equal(report.body.currency, CURRENCY);
      const buckets = report.body.data as (UsageRow & { reserved: { tasks: number } })[];
      assert.deepEqual(
        buckets.map(({ key, tasks, video_seconds, cost }) => ({ key, tasks, video_seconds, cost })),
        expected,
      );
      const { reserved, ...totals } = report.body.totals as Omit<UsageRow, 'key'> & {
        reserved: { tasks: number };
      };
      assert.deepEqual({ key: 'total', ...totals }, total);
      assert.equal(reserved.tasks, 0);
    }

    await openPage(page, 'Usage');
    const chart = (label: string) => page.getByRole('img', { name: label, exact: true });
    const secondsLabel = (title: string, rows: UsageRow[]) =>
      `${title}. ${rows.map((row) => `${row.key}: ${row.video_seconds} s`).join('; ')}`;
    const costLabel = (title: string, rows: UsageRow[]) =>
      `${title}. ${rows.map((row) => `${row.key}: ${row.cost} ${CURRENCY}`).join('; ')}`;
    const totalsText = (row: Omit<UsageRow, 'key'>) =>
      `${row.tasks} completed tasks, ${row.video_seconds} video seconds, ${row.cost} ${CURRENCY}. ` +
      'Failed and cancelled tasks cost nothing.';
    const usageShown = async (day: UsageRow[], model: UsageRow[], sum: Omit<UsageRow, 'key'>) => {
      // After a change of range the former charts stay until the new answer replaces them: wait for the figures.
      await chart(secondsLabel('Video seconds per day', day)).waitFor();
      await chart(secondsLabel('Video seconds per model', model)).waitFor();
      assert.equal(await text(page.locator('.usage-totals')), totalsText(sum));
    };
    await usageShown(byDay, byModel, total);
    await chart(costLabel(`Cost per day (${CURRENCY})`, byDay)).waitFor();
    await chart(costLabel(`Cost per model (${CURRENCY})`, byModel)).waitFor();

    // One bar per bucket, labelled with its key and its figure, its length (a share of the width) in proportion
    // to the figure.
    for (const [label, rows, figure] of [
      [secondsLabel('Video seconds per day', byDay), byDay, 'video_seconds'],
      [secondsLabel('Video seconds per model', byModel), byModel, 'video_seconds'],
      [costLabel(`Cost per model (${CURRENCY})`, byModel), byModel, 'cost'],
    ] as const) {
      const svg = chart(label);
      assert.deepEqual(
        await svg.locator('.usage-chart-label').allTextContents(),
        rows.map((row) => row.key),
      );
      assert.deepEqual(
        await svg.locator('.usage-chart-value').allTextContents(),
        rows.map((row) => String(row[figure])),
      );
      const widths = await svg
        .locator('rect.usage-chart-bar')
        .evaluateAll((bars) => bars.map((bar) => bar.getAttribute('width') as string));
      assert.ok(
        widths.every((width) => width.endsWith('%')),
        widths.join(),
      );
      const shares = widths.map((width) => Number.parseFloat(width));
      assert.equal(shares.length, rows.length);
      const largest = Math.max(...rows.map((row) => row[figure]));
      const longest = Math.max(...shares);
      rows.forEach((row, i) => {
        assert.ok(
          Math.abs((shares[i] ?? 0) - (longest * row[figure]) / largest) < 0.01,
          `${label}: ${widths}`,
        );
      });
    }
    // The tables give the same figures.
    const tableRows = (name: string) =>
      page
        .getByRole('region', { name })
        .locator('tbody tr')
        .evaluateAll((rows) =>
          rows.map((row) => [...row.querySelectorAll('td')].map((td) => td.textContent as string)),
        );
    const asCells = (rows: UsageRow[]) =>
      rows.map((row) => [row.key, String(row.tasks), String(row.video_seconds), String(row.cost)]);
    assert.deepEqual(await tableRows('Usage per day'), asCells(byDay));
    assert.deepEqual(await tableRows('Usage per model'), asCells(byModel));
    assert.deepEqual(
      await page.getByRole('region', { name: 'Usage per model' }).locator('th').allTextContents(),
      ['Model', 'Tasks', 'Video seconds', `Cost (${CURRENCY})`],
    );

    // Another range asks the API for that range and redraws everything.
    const range = page.getByLabel('Range', { exact: true });
    const asked = () =>
      page
        .waitForRequest((request) => {
          const url = new URL(request.url());
          return url.pathname === '/v1/usage' && url.searchParams.get('group_by') === 'day';
        })
        .then((request) => Object.fromEntries(new URL(request.url()).searchParams));
    let request = asked();
    await range.selectOption('Last month');
    assert.deepEqual(await request, {
      group_by: 'day',
      start: String(monthStart(-1)),
      end: String(monthStart()),
    });
    await page.getByText('No tasks were created in this range.').waitFor();
    assert.equal(await page.getByRole('img').count(), 0, 'no empty charts');
    assert.equal(await page.getByRole('region', { name: 'Usage per day' }).count(), 0, 'nor empty tables');
    assert.equal(
      await text(page.locator('.usage-totals')),
      totalsText({ tasks: 0, video_seconds: 0, cost: 0 }),
    );

    request = asked();
    await range.selectOption('Last 7 days');
    const tomorrow = Math.floor(Date.now() / 86_400_000 + 1) * 86_400;
    assert.deepEqual(await request, {
      group_by: 'day',
      start: String(tomorrow - 7 * 86_400),
      end: String(tomorrow),
    });
    await usageShown(byDay, byModel, total);

    // An answer that comes after a later range's does not replace it: last month's is held back here.
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const heldBack = '**/v1/usage?*';
    await page.route(heldBack, async (route) => {
      if (new URL(route.request().url()).searchParams.get('start') === String(monthStart(-1))) await held;
      await route.continue();
    });
    try {
      await range.selectOption('Last month');
      await range.selectOption('This month');
      await usageShown(byDay, byModel, total);
      const lastMonthAnswered = Promise.all(
        ['day', 'model'].map((groupBy) =>
          page.waitForEvent('requestfinished', (finished) => {
            const url = new URL(finished.url());
            return (
              url.pathname === '/v1/usage' &&
              url.searchParams.get('group_by') === groupBy &&
              url.searchParams.get('start') === String(monthStart(-1))
            );
          }),
        ),
      );
      release();
      await lastMonthAnswered;
    } finally {
      await page.unroute(heldBack);
    }
    // A round trip of the page's own after the late answer arrived: by then the page has dealt with it.
    assert.equal((await fetchInPage(page, '/dashboard/api/session')).status, 200);
    await usageShown(byDay, byModel, total);
    assert.equal(await page.getByText('No tasks were created in this range.').count(), 0);
    await screenshot(page, 'usage');

    // The CSV: the rows of both groupings, built in the page.
    const downloading = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download CSV' }).click();
    const download = await downloading;
    assert.equal(download.suggestedFilename(), `videogen-usage-this-month-${utcDay(monthStart())}.csv`);
    const csv = await readFile(await download.path(), 'utf8');
    const line = (group: string, row: UsageRow) =>
      [group, row.key, row.tasks, row.video_seconds, row.cost, CURRENCY].join(',');
    assert.equal(
      csv,
      [
        'group,key,tasks,video_seconds,cost,currency',
        ...byDay.map((row) => line('day', row)),
        ...byModel.map((row) => line('model', row)),
        '',
      ].join('\n'),
    );
  });

  it('sets the account’s monthly limit on the Usage page: a creation past it is refused with 402', async () => {
    const limits = page.getByRole('form', { name: 'Account limits' });
    const seconds = limits.getByLabel('Monthly video seconds');
    await seconds.waitFor();
    const before = await fetchInPage(page, '/dashboard/api/limits');
    const month = before.body.this_month as Record<'used' | 'reserved', UsageRow>;
    assert.deepEqual(before.body.limits, { monthly_video_seconds: null, monthly_budget: null });
    assert.match(
      await text(limits),
      new RegExp(
        `Now: None\\. This month, in every environment: ${month.used.video_seconds} video seconds used and ` +
          `${month.reserved.video_seconds} reserved, ${month.used.cost} ${CURRENCY} spent\\.`,
      ),
    );
    const counted = month.used.video_seconds + month.reserved.video_seconds;
    const limit = counted + 3;
    const request = { model: FAST_TEXT, prompt: 'One too many', duration: 4, quality: '480p' };

    await seconds.fill(String(limit));
    await limits.getByRole('button', { name: 'Save limits' }).click();
    await limits.getByText(`Now: ${limit} video s a month.`).waitFor();
    assert.equal(await seconds.inputValue(), String(limit));
    assert.equal(
      await page.evaluate(() => document.activeElement?.textContent),
      'Save limits',
      'the form is updated in place: the focus stays on its button',
    );
    const saved = await fetchInPage(page, '/dashboard/api/limits');
    assert.deepEqual(saved.body.limits, { monthly_video_seconds: limit, monthly_budget: null });

    const refused = await withKey(server.url, developmentKey, '/v1/videos/generations', request);
    assert.equal(refused.status, 402, JSON.stringify(refused.body));
    assert.equal(refused.body.error?.code, 'budget_exceeded');
    assert.equal(
      (refused.body.error as { message?: string }).message,
      secondsLimitMessage('account', limit, counted, 4),
    );
    // The playground says the same, and creates nothing.
    await openPage(page, 'Playground');
    await page.waitForFunction(() => !document.querySelector('form[aria-busy="true"]'));
    await page.getByLabel('Text to video').check();
    await page.getByLabel('Prompt').fill(request.prompt);
    await page.getByLabel('Duration (seconds)').fill('4');
    await page.getByLabel('Quality').selectOption('480p');
    const taskCount = async () =>
      ((await withKey(server.url, developmentKey, '/v1/tasks?limit=100')).body.data as PublicTask[]).length;
    const tasksBefore = await taskCount();
    await page.getByRole('button', { name: 'Generate video' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: secondsLimitMessage('account', limit, counted, 4) })
      .waitFor();
    assert.equal(await taskCount(), tasksBefore);

    // Cleared (a blank field is no limit), creations work again. A budget the server refuses is said in the form.
    await openPage(page, 'Usage');
    await limits.getByLabel('Monthly budget').fill('10000000000000');
    await limits.getByRole('button', { name: 'Save limits' }).click();
    await limits
      .getByRole('alert')
      .filter({ hasText: 'monthly_budget must be an amount of 0 or more, or none.' })
      .waitFor();
    await limits.getByLabel('Monthly budget').fill('');
    await seconds.fill('');
    await limits.getByRole('button', { name: 'Save limits' }).click();
    await limits.getByText('Now: None.').waitFor();
    const cleared = await fetchInPage(page, '/dashboard/api/limits');
    assert.deepEqual(cleared.body.limits, { monthly_video_seconds: null, monthly_budget: null });
    const created = await withKey(server.url, developmentKey, '/v1/videos/generations', request);
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const cancelled = await withKey(server.url, developmentKey, `/v1/tasks/${created.body.id}/cancel`, {});
    assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
  });

  it('sets a key’s monthly limits on the keys page: a creation past one is refused with 402', async () => {
    await openPage(page, 'API keys');
    await page.getByRole('form', { name: 'Create a key' }).getByLabel('Monthly video seconds').fill('3');
    const key = await createKeyOnPage(page, 'limited', 'development');
    await page.getByRole('button', { name: 'Done' }).click();
    const limitsCell = keyRow(page, 'limited').locator('td[data-label="Monthly limits"]');
    assert.equal(await text(limitsCell), '3 video s a month');
    const request = { model: FAST_TEXT, prompt: 'Past the key’s limit', duration: 4, quality: '480p' };
    const refused = await withKey(server.url, key, '/v1/videos/generations', request);
    assert.equal(refused.status, 402, JSON.stringify(refused.body));
    assert.equal(refused.body.error?.code, 'budget_exceeded');
    assert.equal(
      (refused.body.error as { message?: string }).message,
      secondsLimitMessage('API key', 3, 0, 4),
    );

    // A budget instead: the task's seconds pass, its cost (4 s at 0.05 USD) does not.
    const setLimits = async (values: { seconds: string; budget: string }) => {
      await page.getByRole('button', { name: 'Limits of limited' }).click();
      const dialog = page.getByRole('dialog', { name: 'Monthly limits of “limited”' });
      await dialog.getByLabel('Monthly video seconds').fill(values.seconds);
      await dialog.getByLabel('Monthly budget').fill(values.budget);
      await dialog.getByRole('button', { name: 'Save limits' }).click();
      await dialog.waitFor({ state: 'detached' });
    };
    await setLimits({ seconds: '', budget: '0.1' });
    await limitsCell.filter({ hasText: `0.1 ${CURRENCY} a month` }).waitFor();
    assert.equal(
      await page.evaluate(() => document.activeElement?.getAttribute('aria-label')),
      'Limits of limited',
      'the list is redrawn, and the focus goes back to the button that opened the dialog',
    );
    assert.equal(await text(limitsCell), `0.1 ${CURRENCY} a month`);
    const overBudget = await withKey(server.url, key, '/v1/videos/generations', request);
    assert.equal(overBudget.status, 402, JSON.stringify(overBudget.body));
    assert.match(
      (overBudget.body.error as { message?: string }).message ?? '',
      /^This API key's monthly budget of 0\.1 USD would be exceeded: 0 USD used or reserved this month, this task costs 0\.2 USD;/,
    );

    await setLimits({ seconds: '', budget: '' });
    await limitsCell.filter({ hasText: 'None' }).waitFor();
    const created = await withKey(server.url, key, '/v1/videos/generations', request);
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal((await withKey(server.url, key, `/v1/tasks/${created.body.id}/cancel`, {})).status, 200);

    // Revoked, so the later pages and screenshots show the keys as before.
    await page.getByRole('button', { name: 'Revoke limited' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click();
    await keyRow(page, 'limited').waitFor({ state: 'detached' });
  });

  it('shows no cost on the Usage page when no prices are configured', async () => {
    // The service's own answers, as a server without `prices` in its engines file gives them.
    const usage = '**/v1/usage?*';
    const limits = '**/dashboard/api/limits';
    try {
      await page.route(usage, async (route) => {
        const response = await route.fetch();
        const { currency: _, ...report } = (await response.json()) as Record<string, unknown> & {
          data: Record<string, unknown>[];
          totals: Record<string, unknown> & { reserved: Record<string, unknown> };
        };
        const costless = ({ cost: _cost, ...figures }: Record<string, unknown>) => figures;
        await route.fulfill({
          response,
          json: {
            ...report,
            data: report.data.map((bucket) => ({
              ...costless(bucket),
              reserved: costless(bucket.reserved as Record<string, unknown>),
            })),
            totals: { ...costless(report.totals), reserved: costless(report.totals.reserved) },
          },
        });
      });
      await page.route(limits, async (route) => {
        const response = await route.fetch();
        const answer = (await response.json()) as Record<string, unknown>;
        await route.fulfill({ response, json: { ...answer, currency: null } });
      });
      await openPage(page, 'Usage');
      const perModel = page.getByRole('region', { name: 'Usage per model' });
      await perModel.waitFor();
      assert.deepEqual(await perModel.locator('th').allTextContents(), ['Model', 'Tasks', 'Video seconds']);
      assert.deepEqual(
        (
          await page
            .getByRole('img')
            .evaluateAll((charts) => charts.map((chart) => chart.getAttribute('aria-label')))
        ).map((name) => name?.split('.')[0]),
        ['Video seconds per day', 'Video seconds per model'],
        'no cost charts',
      );
      assert.match(
        await text(page.locator('.usage-totals')),
        /^\d+ completed tasks, \d+ video seconds\. Failed and cancelled tasks cost nothing\.$/,
      );
      const form = page.getByRole('form', { name: 'Account limits' });
      await form.getByText('No prices are configured, so a budget holds no task.').waitFor();
      assert.doesNotMatch(await text(form), /USD/);

      const downloading = page.waitForEvent('download');
      await page.getByRole('button', { name: 'Download CSV' }).click();
      const csv = (await readFile(await (await downloading).path(), 'utf8')).trimEnd().split('\n');
      assert.equal(csv[0], 'group,key,tasks,video_seconds,cost,currency');
      const rows = await page.locator('.usage-table tbody tr').count();
      assert.equal(csv.length, 1 + rows, csv.join('\n'));
      for (const line of csv.slice(1)) assert.match(line, /^(day|model),[^,]+,\d+,\d+,,$/);

      // A range that cannot be read: the page says so, and shows no other range's figures under its name.
      await page.unroute(usage);
      await page.route(usage, (route) =>
        route.fulfill({
          status: 503,
          json: { error: { code: 'overloaded', message: 'The server is busy.', type: 'api_error' } },
        }),
      );
      await page.getByLabel('Range', { exact: true }).selectOption('Last 30 days');
      await page.getByRole('alert').filter({ hasText: 'The server is busy.' }).waitFor();
      assert.equal(await page.getByRole('img').count(), 0);
      assert.equal(await text(page.locator('.usage-totals')), '');
      assert.equal(await page.getByRole('button', { name: 'Download CSV' }).isDisabled(), true);
      await page.unroute(usage);
      await page.getByLabel('Range', { exact: true }).selectOption('This month');
      await page.getByRole('img', { name: /^Cost per day \(USD\)\./ }).waitFor();
      assert.equal(await page.getByRole('alert').filter({ hasText: 'The server is busy.' }).count(), 0);
    } finally {
      await page.unroute(usage);
      await page.unroute(limits);
    }
  });

  it('reveals the webhook secret, which verifies a real callback, and rotates it', async () => {
    await openPage(page, 'Webhooks');
    const secretInput = page.getByRole('textbox', { name: 'Current secret' });
    await page.waitForFunction(() => document.querySelector('.secret-value')?.value !== '');
    assert.equal(await secretInput.getAttribute('type'), 'password', 'hidden until revealed');
    await page.getByRole('button', { name: 'Reveal' }).click();
    assert.equal(await secretInput.getAttribute('type'), 'text');
    const secret = await secretInput.inputValue();
    assert.match(secret, /^whsec_/);

    const [, callback] = await receiver.waitFor(2);
    assert.ok(callback);
    const headers = Object.fromEntries(
      Object.entries(callback.headers).map(([name, value]) => [name, String(value)]),
    );
    const verified = new Webhook(secret).verify(callback.body, headers) as PublicTask;
    assert.equal(verified.id, calledBack.id);
    assert.equal(verified.status, 'completed');
    assert.match(
      await text(page.getByLabel('Verification with the standardwebhooks library')),
      /wh\.verify\(req\.body, req\.headers\)/,
    );
    // The by-hand sample, run as the page shows it, verifies the same callback and refuses a tampered one.
    const sample = await text(page.getByLabel('Verification with node:crypto'));
    const { verifyCallback } = (await import(`data:text/javascript,${encodeURIComponent(sample)}`)) as {
      verifyCallback(secret: string, headers: Record<string, string>, body: string): PublicTask;
    };
    assert.equal(verifyCallback(secret, headers, callback.body).id, calledBack.id);
    assert.throws(
      () => verifyCallback(secret, headers, callback.body.replace('completed', 'failed')),
      /bad signature/,
    );
    await screenshot(page, 'webhooks');

    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page
      .getByRole('dialog', { name: 'Rotate the signing secret?' })
      .getByRole('button', { name: 'Rotate secret' })
      .click();
    await page.waitForFunction((old) => document.querySelector('.secret-value')?.value !== old, secret);
    const rotated = await secretInput.inputValue();
    assert.match(rotated, /^whsec_/);
    await page.getByText('The previous secret also signs every callback until').waitFor();
    const fromServer = await fetchInPage(page, '/dashboard/api/webhook-secret');
    assert.equal(fromServer.body.secret, rotated);
  });

  it('labels every control, shows the keyboard focus and reaches every page from the keyboard', async () => {
    for (const hash of ['#/keys', '#/tasks', '#/playground?mode=reference', '#/usage', '#/webhooks']) {
      await page.goto(`${server.url}/dashboard${hash}`);
      await page.locator('h1').waitFor();
      await page.waitForFunction(() => !document.querySelector('[aria-busy="true"]'));
      const unlabelled = await page
        .locator('input, select, textarea, button')
        .evaluateAll((controls) =>
          controls
            .filter(
              (control) =>
                !(control.labels?.length || control.getAttribute('aria-label') || control.textContent.trim()),
            )
            .map((control) => control.outerHTML as string),
        );
      assert.deepEqual(unlabelled, [], `${hash}: controls without a label`);
      // Two fields of one name (the header's environment switcher and a form's environment) cannot be told
      // apart by a screen reader's list of form fields, nor found by their label.
      const names = await page
        .locator('input:not([type="hidden"]), select, textarea')
        .evaluateAll((controls) =>
          controls.map(
            (control) =>
              (control.getAttribute('aria-label') ||
                [...(control.labels ?? [])].map((label) => label.textContent.trim()).join(' ')) as string,
          ),
        );
      const repeated = names.filter((name, i) => names.indexOf(name) !== i);
      assert.deepEqual(repeated, [], `${hash}: fields sharing a name among ${names.join(', ')}`);
    }
    await page.goto(`${server.url}/dashboard#/keys`);
    await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
    await page.getByRole('link', { name: 'Skip to content' }).focus();
    await page.keyboard.press('Enter');
    assert.equal(
      await page.evaluate(() => document.activeElement?.tagName),
      'MAIN',
      'the skip link skips the header',
    );
    await page.getByRole('link', { name: 'Skip to content' }).focus();
    const reached: string[] = [];
    for (let i = 0; i < 12 && !reached.includes('Webhooks'); i++) {
      await page.keyboard.press('Tab');
      const focused = await page.evaluate(() => {
        const element = document.activeElement;
        if (!element) return { text: '', outline: 'none', width: '0px' };
        const style = getComputedStyle(element);
        return {
          text: element.textContent?.trim() ?? '',
          outline: style.outlineStyle,
          width: style.outlineWidth,
        };
      });
      assert.notEqual(focused.outline, 'none', `focus is visible on ${focused.text}`);
      assert.ok(Number.parseFloat(focused.width) >= 2, `outline ${focused.width} on ${focused.text}`);
      reached.push(focused.text);
    }
    assert.ok(reached.includes('Webhooks'), `reached: ${reached.join(', ')}`);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
    assert.equal(
      await page.evaluate(() => document.activeElement?.tagName),
      'H1',
      'focus moves to the new page',
    );
  });

  it('shows Page not found for a malformed address, and builds no javascript: link from data', async () => {
    await page.goto(`${server.url}/dashboard#/tasks/%E0%A4%A`);
    await page.getByRole('heading', { level: 1, name: 'Page not found' }).waitFor();

    const built = await page.evaluate(async () => {
      const modulePath = '/dashboard/assets/ui.js';
      const domPath = '/dashboard/assets/dom.js';
      const [ui, dom] = await Promise.all([import(modulePath), import(domPath)]);
      return [
        ui.resultVideo('javascript:alert(document.domain)', 'Generated video').outerHTML,
        ui.resultVideo(' JaVaScRiPt:alert(1)', 'Generated video').outerHTML,
        dom.h('a', { href: 'data:text/html,<script>alert(1)</script>' }, 'result').outerHTML,
      ] as string[];
    });
    for (const html of built) assert.doesNotMatch(html, /javascript:|data:|href|src=/i, html);
  });

  it('fits a 390 px wide phone screen on every page', async () => {
    const phone = await newDashboardContext(browser, { width: 390, height: 844 });
    try {
      const phonePage = watchPage(await phone.newPage(), server.url, problems);
      await signIn(phonePage, server.url, EMAIL, PASSWORD);
      const pages: [string, string][] = [
        ['#/keys', 'keys-phone'],
        ['#/tasks', 'tasks-phone'],
        ['#/playground', 'playground-phone'],
        ['#/usage', 'usage-phone'],
        ['#/webhooks', 'webhooks-phone'],
      ];
      for (const [hash, name] of pages) {
        await phonePage.goto(`${server.url}/dashboard${hash}`);
        await phonePage.locator('h1').waitFor();
        await phonePage.waitForFunction(() => !document.querySelector('[aria-busy="true"]'));
        const width = await phonePage.evaluate(() => document.documentElement.scrollWidth);
        assert.ok(width <= 390, `${hash} is ${width} px wide`);
        for (const link of ['API keys', 'Tasks', 'Playground', 'Usage', 'Webhooks']) {
          const navLink = phonePage
            .getByRole('navigation', { name: 'Dashboard' })
            .getByRole('link', { name: link });
          assert.equal(await navLink.isVisible(), true);
        }
        await screenshot(phonePage, name);
      }
      await phonePage.getByRole('button', { name: 'Sign out' }).click();
      await phonePage.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
      assert.deepEqual(
        (await phone.cookies()).filter((cookie) => cookie.name === 'videogen_session'),
        [],
        'signing out clears the cookie',
      );
      await phonePage.goto(`${server.url}/dashboard#/keys`);
      await phonePage.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    } finally {
      await phone.close();
    }
  });

  it('locks an email out after five wrong passwords, even for the right one', async () => {
    const email = 'locked@example.com';
    await createOwnerAccount(server.service.store, { email, password: PASSWORD });
    const other = await newDashboardContext(browser, { width: 1280, height: 900 });
    try {
      const otherPage = watchPage(await other.newPage(), server.url, problems);
      await otherPage.goto(`${server.url}/dashboard#/sign-in`);
      await otherPage.getByLabel('Email').fill(email);
      const alert = otherPage.getByRole('alert');
      for (let attempt = 0; attempt < 5; attempt++) {
        await otherPage.getByLabel('Password').fill(`guess number ${attempt}`);
        await otherPage.getByRole('button', { name: 'Sign in' }).click();
        await otherPage.waitForFunction(
          () =>
            document.querySelector('.error-box')?.hidden === false &&
            !document.querySelector('button:disabled'),
        );
        assert.match(await text(alert), /do not match/);
      }
      await otherPage.getByLabel('Password').fill(PASSWORD);
      await otherPage.getByRole('button', { name: 'Sign in' }).click();
      await otherPage
        .getByText(/Too many failed sign-ins for this email\. Try again in \d+ minutes\./)
        .waitFor();
      assert.deepEqual(await other.cookies(), []);
    } finally {
      await other.close();
    }
  });

  it('loaded nothing from elsewhere, broke no content security policy rule and threw no script error', () => {
    assert.deepEqual(problems.foreignRequests, []);
    assert.deepEqual(problems.cspViolations, []);
    assert.deepEqual(problems.scriptErrors, []);
  });
});

/**
 * The dashboard in a real browser (Debian's Chromium through playwright-core), against the whole service in
 * this process: signing in, the cookie's flags and CSRF, keys created on the page and used through the API,
 * revocation and rotation as the API sees them, the playground run to a playing video, the tasks pages with
 * live status and callback deliveries, the webhook secret verifying a real callback, a phone-width screen,
 * labels and keyboard use. The same run writes the screenshots in docs/images/dashboard/.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, ConsoleMessage, Locator, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { createOwnerAccount } from '../src/accounts.js';
import type { PublicTask } from '../src/domain/task.js';
import type { PublicModel, PublicModelList } from '../src/model-list.js';
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
import { writeTestImage } from './helpers/media-fixtures.js';
import { startTestService, type TestService } from './helpers/test-service.js';
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
    server = await startTestService({ VIDEOGEN_WORKER_CONCURRENCY: '1' });
    const { accountId } = await createOwnerAccount(server.service.store, {
      email: EMAIL,
      password: PASSWORD,
    });
    developmentKey = (await server.newKey('development', accountId)).key;
    receiver = await startWebhookReceiver();
    fixtures = await mkdtemp(join(tmpdir(), 'videogen-dashboard-'));
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
    assert.equal(await page.getByLabel('Aspect ratio').inputValue(), 'adaptive');
    await page.getByLabel('First frame', { exact: true }).setInputFiles(image);

    const preview = page.getByRole('img', { name: 'Preview of first frame.png' });
    await preview.waitFor();
    await page.waitForFunction(() => document.querySelector('.previews img')?.naturalWidth === 320);
    assert.match((await preview.getAttribute('src')) ?? '', /^blob:/);
    const command = await text(page.getByLabel('Equivalent curl command'));
    assert.ok(command.includes(`curl -s ${server.url}/v1/files`), command);
    assert.ok(command.includes("-F 'file=@first frame.png'"), command);
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
        ['480p', '720p'],
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

      // Without the list, the page says so and offers what the catalogue allows.
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
      await form.getByLabel('Reference to video').check();
      assert.doesNotMatch(await text(form), /unavailable/);
      assert.equal(await form.getByLabel(AUDIO).count(), 1);
      assert.deepEqual([await duration.getAttribute('min'), await duration.getAttribute('max')], ['4', '15']);
      await form.getByLabel('Text to video').check();
    } finally {
      await page.unroute(models);
    }
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
    for (const hash of ['#/keys', '#/tasks', '#/playground?mode=reference', '#/webhooks']) {
      await page.goto(`${server.url}/dashboard${hash}`);
      await page.locator('h1').waitFor();
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
        ['#/webhooks', 'webhooks-phone'],
      ];
      for (const [hash, name] of pages) {
        await phonePage.goto(`${server.url}/dashboard${hash}`);
        await phonePage.locator('h1').waitFor();
        await phonePage.waitForFunction(() => !document.querySelector('[aria-busy="true"]'));
        const width = await phonePage.evaluate(() => document.documentElement.scrollWidth);
        assert.ok(width <= 390, `${hash} is ${width} px wide`);
        for (const link of ['API keys', 'Tasks', 'Playground', 'Webhooks']) {
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

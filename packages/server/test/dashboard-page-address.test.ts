/**
 * The dashboard opened at the README's address, `http://localhost:<port>/dashboard`, while the server listens
 * on 127.0.0.1 with no VIDEOGEN_PUBLIC_URL: a task's video plays (its link is at the page's own origin, which
 * the page's `media-src 'self'` allows), the playground's curl command names one address, and a task's request
 * shows the uploaded file by its URL.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { createOwnerAccount } from '../src/accounts/accounts.js';
import type { PublicTask } from '../src/domain/task.js';
import {
  chromiumSuite,
  launchChromium,
  newDashboardContext,
  newProblems,
  type PageProblems,
  signIn,
  watchPage,
} from './helpers/browser.js';
import { writeTestImage } from './helpers/media-fixtures.js';
import { startTestService, type TestService } from './helpers/test-service.js';

/** The browser globals the functions run in the page use (this package compiles without the DOM library). */
interface PageVideo {
  readonly readyState: number;
  readonly error: { readonly code: number; readonly message: string } | null;
  readonly currentSrc: string;
  addEventListener(type: string, listener: () => void): void;
}

const EMAIL = 'owner@example.com';
const PASSWORD = 'correct horse battery staple';
const RENDER_TIMEOUT_MS = 120_000;

/** Waits for the `<video>` under `scope` to have its first frame, or an error, and says which. */
async function loadedVideo(page: Page, scope: string) {
  const video = page.locator(`${scope} video`);
  await video.waitFor({ timeout: RENDER_TIMEOUT_MS });
  return video.evaluate(
    (element: PageVideo) =>
      new Promise<{ readyState: number; error: string | null; src: string }>((resolve) => {
        const done = () =>
          resolve({
            readyState: element.readyState,
            error: element.error ? element.error.message || String(element.error.code) : null,
            src: element.currentSrc,
          });
        if (element.readyState >= 2 || element.error) done();
        element.addEventListener('loadeddata', done);
        element.addEventListener('error', done);
      }),
    undefined,
    { timeout: RENDER_TIMEOUT_MS },
  );
}

const chromiumInstalled = await chromiumSuite();

describe('dashboard at http://localhost:<port>', { timeout: 300_000, ...chromiumInstalled }, () => {
  let server: TestService;
  let browser: Browser;
  let page: Page;
  let fixtures: string;
  let key: string;
  /** `http://localhost:<port>`: the address the README gives. */
  let pageOrigin: string;
  const problems: PageProblems = newProblems();

  before(async () => {
    fixtures = await mkdtemp(join(tmpdir(), 'videogen-page-address-'));
    server = await startTestService({ VIDEOGEN_WORKER_CONCURRENCY: '1' });
    const { accountId } = await createOwnerAccount(server.service.store, {
      email: EMAIL,
      password: PASSWORD,
    });
    key = (await server.newKey('development', accountId)).key;
    const listening = new URL(server.url);
    assert.equal(listening.hostname, '127.0.0.1');
    pageOrigin = `http://localhost:${listening.port}`;
    browser = await launchChromium();
    const context = await newDashboardContext(browser, { width: 1280, height: 900 });
    page = watchPage(await context.newPage(), pageOrigin, problems);
    await signIn(page, pageOrigin, EMAIL, PASSWORD);
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await rm(fixtures, { recursive: true, force: true });
  });

  it('plays the video of a task a client created at 127.0.0.1', async () => {
    const response = await fetch(`${server.url}/v1/videos/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'videogen-2.0-fast-text-to-video',
        prompt: 'A lighthouse at dusk',
        duration: 4,
        quality: '480p',
      }),
    });
    const created = (await response.json()) as PublicTask;
    assert.equal(response.status, 200, JSON.stringify(created));

    await page.goto(`${pageOrigin}/dashboard#/tasks/${created.id}`);
    await page.locator('.summary .status-completed').waitFor({ timeout: RENDER_TIMEOUT_MS });
    const video = await loadedVideo(page, 'main');
    assert.equal(video.error, null);
    assert.ok(video.readyState >= 2, `readyState ${video.readyState}`);
    assert.equal(new URL(video.src).origin, pageOrigin);
    assert.deepEqual(problems.cspViolations, []);
  });

  it("names one address in the playground's curl command, and shows the uploaded file's URL in the task's request", async () => {
    const image = join(fixtures, 'frame.png');
    await writeTestImage(image, { width: 320, height: 240, colour: [200, 90, 30] });
    await page.goto(`${pageOrigin}/dashboard#/playground?mode=image`);
    await page.getByLabel('Prompt').fill('The camera pushes in on image 1');
    await page.getByLabel('Duration (seconds)').fill('4');
    await page.getByLabel('Quality').selectOption('480p');
    await page.getByLabel('First frame', { exact: true }).setInputFiles(image);
    await page.getByRole('button', { name: 'Generate video' }).click();
    const video = await loadedVideo(page, '.run');
    assert.equal(video.error, null);
    assert.equal(new URL(video.src).origin, pageOrigin);

    const command = (await page.getByLabel('Equivalent curl command').textContent()) ?? '';
    const addresses = new Set([...command.matchAll(/https?:\/\/[^/\s'"]+/g)].map(([url]) => url));
    assert.deepEqual([...addresses], [pageOrigin], command);
    const fileUrl = /"(http[^"]+\/v1\/files\/file-[0-9a-f]+\/content)"/.exec(command)?.[1];
    assert.ok(fileUrl, command);

    await page.locator('.run a[href^="#/tasks/"]').click();
    await page.getByRole('heading', { level: 1, name: 'Task' }).waitFor();
    const request = page.getByRole('region', { name: 'Request' }).locator('pre');
    await request.waitFor();
    const shown = JSON.parse((await request.textContent()) ?? '{}') as { image_urls?: string[] };
    assert.deepEqual(shown.image_urls, [fileUrl]);
  });

  it('loaded nothing from elsewhere, broke no content security policy rule and threw no script error', () => {
    assert.deepEqual(problems, newProblems());
  });
});

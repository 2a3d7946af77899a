/**
 * The SDK in a browser: its built modules loaded as they are into Debian's Chromium, on a page of the server's
 * own origin, make a video end to end (`generate`: creation, the event stream read from a browser's fetch, the
 * completed task), upload a Blob drawn in the page, list tasks and verify a Standard Webhooks signature with
 * the browser's Web Crypto. Nothing Node.js-only may be left in the SDK for this to pass.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { newWebhookSecret } from '../src/domain/identifiers.js';
import { chromiumSuite, launchChromium, newProblems, watchPage } from './helpers/browser.js';
import { startTestService, type TestService } from './helpers/test-service.js';

/** The SDK as `npm run build` leaves it, served to the page as it would be from a CDN or a bundle. */
const SDK_DIR = fileURLToPath(new URL('../../../client/dist/src/', import.meta.url));

const chromiumInstalled = await chromiumSuite();

describe('the SDK in a browser', { timeout: 300_000, ...chromiumInstalled }, () => {
  let server: TestService;
  let browser: Browser;
  let page: Page;
  let key: string;
  const problems = newProblems();

  before(async () => {
    server = await startTestService({ VIDEOGEN_WORKER_CONCURRENCY: '1' });
    key = (await server.newKey()).key;
    browser = await launchChromium();
    page = watchPage(await browser.newPage(), server.url, problems);
    // A page and the SDK's files at the server's origin, so that the API is same-origin (it sends no CORS).
    await page.route(`${server.url}/sdk-test/**`, async (route) => {
      const path = new URL(route.request().url()).pathname.slice('/sdk-test/'.length);
      if (path === 'index.html') {
        await route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>SDK</title>' });
        return;
      }
      if (!/^[a-z-]+\.js$/.test(path)) return route.fulfill({ status: 404, body: '' });
      await route.fulfill({ contentType: 'text/javascript', body: await readFile(`${SDK_DIR}${path}`) });
    });
    await page.goto(`${server.url}/sdk-test/index.html`);
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('generates a video, waiting on the event stream through the browser’s fetch', async () => {
    const result = (await page.evaluate(`(async () => {
      const { VideogenClient } = await import('/sdk-test/index.js');
      const client = new VideogenClient({ baseUrl: location.origin, apiKey: ${JSON.stringify(key)} });
      const progress = [];
      const task = await client.generate(
        { model: 'videogen-2.0-fast-text-to-video', prompt: 'a kite, drawn in a browser', duration: 4, quality: '480p' },
        { method: 'events', onProgress: (t) => progress.push(t.progress) },
      );
      const listed = [];
      for await (const t of client.listTasks({ limit: 1 })) listed.push(t.id);
      const video = await fetch(task.results[0]);
      return { task, progress, listed, videoType: video.headers.get('content-type'), bytes: (await video.arrayBuffer()).byteLength };
    })()`)) as {
      task: { id: string; status: string; duration: number };
      progress: number[];
      listed: string[];
      videoType: string;
      bytes: number;
    };
    assert.equal(result.task.status, 'completed');
    assert.equal(result.task.duration, 4);
    assert.deepEqual(result.listed, [result.task.id]);
    assert.equal(result.videoType, 'video/mp4');
    assert.ok(result.bytes > 10_000, `${result.bytes} bytes`);
    assert.ok(result.progress.length > 0 && result.progress.at(-1) === 100, String(result.progress));
    const stored = await fetch(`${server.url}/v1/tasks/${result.task.id}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    assert.equal(((await stored.json()) as { status: string }).status, 'completed');
  });

  it('uploads a Blob drawn in the page and makes an image-to-video task of it', async () => {
    const result = (await page.evaluate(`(async () => {
      const { VideogenClient } = await import('/sdk-test/index.js');
      const client = new VideogenClient({ baseUrl: location.origin, apiKey: ${JSON.stringify(key)} });
      const canvas = new OffscreenCanvas(320, 240);
      const context = canvas.getContext('2d');
      context.fillStyle = 'rgb(200, 40, 40)';
      context.fillRect(0, 0, 320, 240);
      const blob = await canvas.convertToBlob({ type: 'image/png' });
      const file = await client.uploadFile(blob, { filename: 'red.png' });
      const task = await client.createTask({ model: 'videogen-2.0-fast-image-to-video', image_urls: [file.url], prompt: 'the red card moves', duration: 4, quality: '480p' });
      return { file, task: await client.waitForTask(task.id, { method: 'poll' }) };
    })()`)) as { file: { kind: string; filename: string }; task: { status: string; aspect_ratio: string } };
    assert.equal(result.file.kind, 'image');
    assert.equal(result.file.filename, 'red.png');
    assert.equal(result.task.status, 'completed');
  });

  it('verifies a Standard Webhooks signature with Web Crypto, and refuses a changed body', async () => {
    const secret = newWebhookSecret();
    const body = JSON.stringify({
      id: 'task-unified-0',
      object: 'video.generation.task',
      status: 'completed',
    });
    const now = new Date();
    const signature = new Webhook(secret).sign('msg_browser', now, body);
    const headers = {
      'webhook-id': 'msg_browser',
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': signature,
    };
    const outcome = (await page.evaluate(`(async () => {
      const { verifyWebhook } = await import('/sdk-test/index.js');
      const body = ${JSON.stringify(body)};
      const headers = ${JSON.stringify(headers)};
      const task = await verifyWebhook(body, headers, ${JSON.stringify(secret)});
      const refused = await verifyWebhook(body + ' ', headers, ${JSON.stringify(secret)}).then(() => null, (e) => e.code);
      return { id: task.id, refused };
    })()`)) as { id: string; refused: string | null };
    assert.deepEqual(outcome, { id: 'task-unified-0', refused: 'invalid_webhook_signature' });
  });

  it('threw no script error and reached no other origin', () => {
    assert.deepEqual(problems, newProblems());
  });
});

/**
 * The `/docs` reference page in a real browser (Debian's Chromium through playwright-core), served on
 * 127.0.0.1: Swagger UI renders the API from /openapi.json under the page's content security policy, logs no
 * error, breaks no policy rule and loads nothing from another host (no validator badge).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, ConsoleMessage } from 'playwright-core';
import { chromiumSuite, launchChromium, newProblems, watchPage } from './helpers/browser.js';
import { startTestService, type TestService } from './helpers/test-service.js';

const chromiumInstalled = await chromiumSuite();

describe('the /docs reference page in a browser', { timeout: 120_000, ...chromiumInstalled }, () => {
  let server: TestService;
  let browser: Browser;

  before(async () => {
    server = await startTestService();
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('shows every tag and operation of the document, and logs no error', async () => {
    const context = await browser.newContext();
    context.setDefaultTimeout(30_000);
    try {
      const problems = newProblems();
      const page = watchPage(await context.newPage(), server.url, problems);
      const consoleErrors: string[] = [];
      page.on('console', (message: ConsoleMessage) => {
        if (message.type() === 'error') consoleErrors.push(message.text());
      });
      await page.goto(`${server.url}/docs`);
      assert.equal(new URL(page.url()).pathname, '/docs/');
      await page
        .getByRole('heading', { name: /^videogen/ })
        .first()
        .waitFor();
      // Each operation of the document is a block of its own, named by method and path (a webhook by its name).
      const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
        paths: Record<string, Record<string, unknown>>;
        webhooks: Record<string, Record<string, unknown>>;
      };
      const operations = [...Object.entries(document.paths), ...Object.entries(document.webhooks)].flatMap(
        ([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
      );
      assert.ok(operations.length > 10);
      await page.locator('.opblock').first().waitFor();
      const shown = await page
        .locator('.opblock-summary')
        .evaluateAll((blocks) =>
          blocks.map(
            (block) =>
              `${block.querySelector('.opblock-summary-method')?.textContent?.trim()} ${block
                .querySelector('.opblock-summary-path')
                ?.getAttribute('data-path')}`,
          ),
        );
      assert.deepEqual(new Set(shown), new Set(operations));
      // The bearer key can be entered for "Try it out".
      await page
        .getByRole('button', { name: /Authorize/ })
        .first()
        .waitFor();
      assert.deepEqual(consoleErrors, []);
      assert.deepEqual(problems, newProblems());
    } finally {
      await context.close();
    }
  });
});

/**
 * The `/docs` reference page in a real browser (Debian's Chromium through playwright-core), served on
 * 127.0.0.1, where the Scalar viewer shows its hosted-service buttons unless told not to: it renders the API
 * without "Ask AI", "Share" or "Deploy", logs no error and loads nothing from another host.
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

  it('shows the API without Scalar’s Ask AI, Share and Deploy buttons, and logs no error', async () => {
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
      await page.getByRole('heading', { name: 'videogen' }).first().waitFor();
      // Rendered in the same pass as the buttons that must be missing, beside them.
      await page.getByRole('button', { name: /Open Search/ }).waitFor();
      await page.getByRole('button', { name: 'Download OpenAPI Document' }).first().waitFor();
      for (const name of ['Ask AI', 'Share', 'Deploy', 'Developer Tools']) {
        assert.equal(await page.getByRole('button', { name }).count(), 0, `a "${name}" button is shown`);
        assert.equal(await page.getByText(name, { exact: true }).count(), 0, `"${name}" is shown`);
      }
      assert.deepEqual(consoleErrors, []);
      assert.deepEqual(problems, newProblems());
    } finally {
      await context.close();
    }
  });
});

/**
 * Driving the dashboard in Debian's Chromium through playwright-core (no downloaded browsers): launching it,
 * pages that record what should never happen (script errors, CSP refusals, requests to other origins), and
 * signing in through the form.
 */
import { access, constants, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';

/** Debian's package (`apt-get install -y chromium`), or another binary named by VIDEOGEN_TEST_CHROMIUM. */
export const CHROMIUM_PATH = process.env.VIDEOGEN_TEST_CHROMIUM || '/usr/bin/chromium';

/**
 * The browser suite's skip option: run when Chromium is installed; otherwise skipped, except with CI=true,
 * where a missing browser is a failure (like a missing PostgreSQL).
 */
export async function chromiumSuite(): Promise<{ skip: string | false }> {
  const missing = await access(CHROMIUM_PATH, constants.X_OK).then(
    () => undefined,
    (error: Error) => `Chromium is not at ${CHROMIUM_PATH} (${error.message})`,
  );
  if (!missing) return { skip: false };
  if (process.env.CI === 'true') {
    test('Chromium is installed (CI=true requires it)', () => {
      throw new Error(
        `${missing}. Install it with apt-get install -y chromium, or set VIDEOGEN_TEST_CHROMIUM.`,
      );
    });
    return { skip: `${missing}; failing, since CI=true` };
  }
  return { skip: `${missing}; install it (apt-get install -y chromium) to run these tests` };
}

/**
 * Where the tests write their screenshots: docs/images/dashboard/ (what docs/dashboard.md shows) with
 * VIDEOGEN_WRITE_SCREENSHOTS=1 (`npm run docs:screenshots`), else a temporary folder, so that a test run does
 * not rewrite tracked files.
 */
export const SCREENSHOT_DIR =
  process.env.VIDEOGEN_WRITE_SCREENSHOTS === '1'
    ? fileURLToPath(new URL('../../../../../docs/images/dashboard/', import.meta.url))
    : join(tmpdir(), 'videogen-dashboard-screenshots/');

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ['--no-sandbox'] });
}

/** What a page did that it never should: uncaught errors, CSP refusals, requests leaving the server. */
export interface PageProblems {
  readonly scriptErrors: string[];
  readonly cspViolations: string[];
  readonly foreignRequests: string[];
}

export function watchPage(page: Page, origin: string, problems: PageProblems): Page {
  page.on('pageerror', (error) => problems.scriptErrors.push(error.message));
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) problems.cspViolations.push(message.text());
  });
  page.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith(`${origin}/`) && !url.startsWith('blob:') && !url.startsWith('data:')) {
      problems.foreignRequests.push(url);
    }
  });
  return page;
}

export function newProblems(): PageProblems {
  return { scriptErrors: [], cspViolations: [], foreignRequests: [] };
}

export async function newDashboardContext(
  browser: Browser,
  options: { width: number; height: number },
): Promise<BrowserContext> {
  const context = await browser.newContext({
    viewport: { width: options.width, height: options.height },
    permissions: ['clipboard-read', 'clipboard-write'],
    reducedMotion: 'reduce',
  });
  context.setDefaultTimeout(30_000);
  return context;
}

/** Signs in through the form and waits for the page the dashboard opens next. */
export async function signIn(page: Page, baseUrl: string, email: string, password: string): Promise<void> {
  await page.goto(`${baseUrl}/dashboard#/sign-in`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: `${SCREENSHOT_DIR}${name}.png`, fullPage: true, animations: 'disabled' });
}

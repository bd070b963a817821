/**
 * Browser-test helpers: Debian's Chromium driven by playwright-core (one browser per test file),
 * signing in through the real form, and screenshots (into docs/console/ with
 * UPDATE_SCREENSHOTS=1, else into $TMPDIR/hcm-console-screenshots).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { ADMIN, root } from '../server/helpers.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install chromium (.ci/run does), or set CHROMIUM_PATH`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** A fresh browser profile at the size the console promises to fit (1280×800). */
export async function newContext(browser: Browser, baseURL: string): Promise<BrowserContext> {
  const context = await browser.newContext({ baseURL, viewport: { width: 1280, height: 800 } });
  context.setDefaultTimeout(15_000);
  return context;
}

/** Signs in through the sign-in page, as a person would. */
export async function signIn(page: Page, token = ADMIN): Promise<void> {
  await page.goto('/console/sign-in');
  await page.getByLabel('Admin token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Integrations' }).waitFor();
}

/** docs/console/ with UPDATE_SCREENSHOTS=1; else one fixed temporary folder, overwritten by each run. */
export const screenshotDir = process.env.UPDATE_SCREENSHOTS === '1' ? join(root, 'docs', 'console') : join(tmpdir(), 'hcm-console-screenshots');
mkdirSync(screenshotDir, { recursive: true });

export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(screenshotDir, `${name}.png`), fullPage: true });
}

/** Marks the current document; `sameDocument` is then false after any navigation or reload. */
export async function markDocument(page: Page): Promise<() => Promise<boolean>> {
  await page.evaluate(() => ((window as unknown as { __mark: boolean }).__mark = true));
  return () => page.evaluate(() => (window as unknown as { __mark?: boolean }).__mark === true);
}

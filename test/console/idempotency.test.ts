/** The console's execution page shows the request's idempotency key (as text, whatever the sender put in it). */
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { fixtures, startTestServer, type TestServer } from '../server/helpers.js';
import { launchBrowser, newContext, signIn } from './helpers.js';

vi.setConfig({ testTimeout: 90_000 });

let s: TestServer;
let browser: Browser;

beforeAll(async () => {
  s = await startTestServer({ dir: join(fixtures, 'idempotency') });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

it('shows the idempotency key on the execution page', async () => {
  const key = 'msg_<b>console</b>';
  const res = await fetch(s.urls('idem-async').live, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'webhook-id': key },
    body: '{}',
  });
  const { executionId } = (await res.json()) as { executionId: string };
  await s.waitForExecution(executionId);
  const page = await (await newContext(browser, s.url)).newPage();
  await signIn(page);
  await page.goto(`/console/executions/${executionId}`);
  const term = page.locator('dt', { hasText: 'Idempotency key' });
  await expect(term.count()).resolves.toBe(1);
  await expect(term.locator('xpath=following-sibling::dd[1]').textContent()).resolves.toBe(key);
  await expect(page.locator('dd b').count()).resolves.toBe(0);
});

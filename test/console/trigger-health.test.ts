/**
 * Trigger health end to end: a poll whose request keeps failing is `failing` in
 * GET /api/integrations/{name}, in the /metrics gauges and on the console's integrations page and
 * integration page (Chromium), with its last error; once the upstream answers again, all of them
 * say so.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { poll, startTestServer, tempDir, type TestServer } from '../server/helpers.js';
import { write } from '../triggers/helpers.js';
import { launchBrowser, newContext, screenshot, signIn } from './helpers.js';

vi.setConfig({ testTimeout: 90_000 });

let upstream: Server;
let failing = true;
let s: TestServer;
let browser: Browser;
let page: Page;
const dir = tempDir('hcm-health-console-');

beforeAll(async () => {
  upstream = createServer((_req, res) => {
    res.writeHead(failing ? 503 : 200, { 'content-type': 'application/json' });
    res.end(failing ? '{"error":"credentials expired"}' : '{"items":[]}');
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/items`;
  write(
    dir.path,
    'flaky-poll.yaml',
    `
name: flaky-poll
trigger:
  type: poll
  every: 1s
  action: core.http
  inputs: { url: "${url}" }
  items: "{% items %}"
  key: "{% id %}"
steps:
  - id: noop
    action: core.log
    inputs: { message: new item }
`,
  );
  write(dir.path, 'hook.yaml', 'name: hook\ntrigger: { type: webhook }\nsteps:\n  - id: noop\n    action: core.log\n    inputs: { message: hi }\n');
  s = await startTestServer({ dir: dir.path });
  browser = await launchBrowser();
  page = await (await newContext(browser, s.url)).newPage();
  await signIn(page);
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
  await new Promise((r) => upstream?.close(r));
  dir.remove();
});

const metrics = async () => (await fetch(`${s.adminUrl}/metrics`)).text();
const gauge = (text: string, name: string) => new RegExp(`^${name}\\{integration="flaky-poll"\\} (\\S+)$`, 'm').exec(text)?.[1];

describe('trigger health', () => {
  it('a failing poll is marked failing in the API, the gauges and the console, and recovers in all of them', async () => {
    const detail = await poll(async () => {
      const r = await s.api('GET', '/integrations/flaky-poll');
      return r.body.health?.status === 'failing' ? r.body : undefined;
    });
    expect(detail.health.consecutiveFailures).toBeGreaterThanOrEqual(3);
    expect(detail.health.lastSuccessAt).toBeNull();
    expect(detail.health.nextRunAt).toEqual(expect.any(String));
    expect(detail.health.lastError.message).toMatch(/503/);
    expect((await s.api('GET', '/integrations/hook')).body.health).toBeUndefined();

    const m = await metrics();
    expect(Number(gauge(m, 'hcm_runner_trigger_consecutive_failures'))).toBeGreaterThanOrEqual(3);
    expect(gauge(m, 'hcm_runner_trigger_last_success_timestamp_seconds')).toBeUndefined();
    expect(m).not.toMatch(/hcm_runner_trigger_consecutive_failures\{integration="hook"\}/);

    await page.goto('/console/');
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'flaky-poll' }) });
    await row.locator('.badge-failing').waitFor();
    expect(await row.textContent()).toMatch(/its last runs failed.*503/s);
    expect(
      await page
        .getByRole('row')
        .filter({ has: page.getByRole('link', { name: 'hook' }) })
        .locator('.badge-failing')
        .count(),
    ).toBe(0);
    await screenshot(page, 'integrations-failing');

    await page.goto('/console/integrations/flaky-poll');
    await page
      .getByRole('heading', { name: /flaky-poll/ })
      .locator('.badge-failing')
      .waitFor();
    const facts = page.locator('#trigger-h + dl');
    expect(await facts.textContent()).toMatch(/Health.*failing.*503.*Last success.*Failures in a row\s*\d+/s);

    failing = false;
    await poll(async () => ((await s.api('GET', '/integrations/flaky-poll')).body.health?.status === 'ok' ? true : undefined));
    const after = await metrics();
    expect(gauge(after, 'hcm_runner_trigger_consecutive_failures')).toBe('0');
    expect(Number(gauge(after, 'hcm_runner_trigger_last_success_timestamp_seconds'))).toBeGreaterThan(Date.now() / 1000 - 60);
    await page.goto('/console/');
    await page.getByRole('link', { name: 'flaky-poll' }).waitFor();
    expect(await page.locator('.badge-failing').count()).toBe(0);
  });
});

/**
 * Durable execution in the console (docs/console.md "An execution", "Executions") in a real
 * browser: Retry from failed step (step 1 is not called again), Cancel of a waiting execution,
 * what a waiting execution waits for (its wake time, the callback URL with Copy), the link
 * between a retry and its original, and the executions page's bulk retry.
 */
import { cpSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { fixtures, startTestServer, tempDir, type TestServer } from '../server/helpers.js';
import { launchBrowser, newContext, screenshot, signIn } from './helpers.js';

vi.setConfig({ testTimeout: 90_000 });

// /one answers 200; /two fails its first request, then answers 200; /fail always 500.
const hits: Record<string, number> = {};
const upstream: Server = createServer((req, res) => {
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  hits[path] = (hits[path] ?? 0) + 1;
  req.resume();
  const ok = path === '/one' || (path === '/two' && hits[path]! > 1);
  res.writeHead(ok ? 200 : 500, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ path, n: hits[path] }));
});

let s: TestServer;
let browser: Browser;
let page: Page;
const dir = tempDir('hcm-console-durable-');

beforeAll(async () => {
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  cpSync(join(fixtures, 'durable-ops'), dir.path, { recursive: true });
  s = await startTestServer({ dir: dir.path, env: { ONE_URL: `${base}/one`, TWO_URL: `${base}/two`, FAIL_URL: `${base}/fail` } });
  browser = await launchBrowser();
  page = await (await newContext(browser, s.url)).newPage();
  await signIn(page);
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
  upstream.closeAllConnections();
  await new Promise<void>((r) => upstream.close(() => r()));
  dir.remove();
});

async function trigger(name: string): Promise<string> {
  const res = await fetch(s.urls(name).live, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  return res.headers.get('x-execution-id')!;
}

describe('an execution page', () => {
  it('Retry from failed step starts a new execution that does not call step 1 again, linked to its original', async () => {
    const id = await trigger('flaky');
    expect((await s.waitForExecution(id)).status).toBe('failed');
    await page.goto(`/console/executions/${id}`);
    // A failed execution can be retried, not cancelled.
    expect(await page.getByRole('button', { name: 'Cancel' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Retry from failed step' }).click();

    await page.getByText('Retried from the failed step: this is the new execution').waitFor();
    const newId = new URL(page.url()).pathname.split('/').pop()!;
    expect(newId).not.toBe(id);
    const retried = await s.waitForExecution(newId);
    expect(retried).toMatchObject({ status: 'succeeded', retryOf: id });
    expect(hits['/one']).toBe(1);
    expect(hits['/two']).toBe(2);
    // The page follows the run to its end, and links to the original.
    await page.locator('h1 .badge', { hasText: 'succeeded' }).waitFor();
    const link = page.locator('dt', { hasText: 'Retry of' }).locator('xpath=following-sibling::dd[1]').getByRole('link');
    expect(await link.getAttribute('href')).toBe(`/console/executions/${id}`);
  });

  it('a waiting execution shows when it wakes; Cancel cancels it at once, then it can be retried', async () => {
    const id = await trigger('waiter');
    const waiting = await s.waitForExecution(id, ['waiting']);
    await page.goto(`/console/executions/${id}`);
    await page.locator('h1 .badge', { hasText: 'waiting' }).waitFor();
    const fact = (name: string) => page.locator('dt', { hasText: name }).locator('xpath=following-sibling::dd[1]');
    expect(await fact('Waits at').textContent()).toContain('nap');
    expect(await fact('Wakes').locator('time').getAttribute('datetime')).toBe(waiting.wakeAt);
    expect(await page.getByRole('button', { name: 'Retry from failed step' }).count()).toBe(0);

    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.getByText('Cancelled.').waitFor();
    await page.locator('h1 .badge', { hasText: 'cancelled' }).waitFor();
    expect((await s.api('GET', `/executions/${id}`)).body.status).toBe('cancelled');
    expect(await page.getByRole('button', { name: 'Cancel' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Retry from failed step' }).count()).toBe(1);
  });

  it('a callback wait shows its URL with a Copy button', async () => {
    const id = await trigger('approval');
    const waiting = await s.waitForExecution(id, ['waiting']);
    expect(waiting.waitingFor.callbackUrl).toMatch(/\/callbacks\//);
    await page.goto(`/console/executions/${id}`);
    const dd = page.locator('dt', { hasText: 'Callback URL' }).locator('xpath=following-sibling::dd[1]');
    expect(await dd.locator('.mono').textContent()).toBe(waiting.waitingFor.callbackUrl);
    expect(await dd.getByRole('button', { name: 'Copy callback URL' }).getAttribute('data-copy')).toBe(waiting.waitingFor.callbackUrl);
    await screenshot(page, 'execution-waiting');
    await s.api('POST', `/executions/${id}/cancel`);
  });
});

describe('the executions page', () => {
  it('filters by the new statuses and retries every failed execution of an integration at once', async () => {
    const ids = [await trigger('always-fails'), await trigger('always-fails')];
    for (const id of ids) await s.waitForExecution(id);
    await page.goto('/console/executions?integration=always-fails&status=failed');
    const statuses = await page.getByLabel('Status').locator('option').allTextContents();
    expect(statuses).toEqual(expect.arrayContaining(['waiting', 'cancelled']));

    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Retry failed' }).click();
    await page.getByText('Retried 2 executions from the failed step').waitFor();
    // The list now shows every status of the integration: the retries, linked to their originals.
    const table = page.getByRole('table', { name: 'Executions' });
    for (const id of ids)
      await table
        .getByRole('link', { name: id.slice(-8) })
        .first()
        .waitFor();
    const retried = (await s.api('GET', '/executions?integration=always-fails')).body.filter((e: { retryOf?: string }) => e.retryOf);
    expect(new Set(retried.map((e: { retryOf: string }) => e.retryOf))).toEqual(new Set(ids));

    // Pressed again once the retries failed too: the originals are skipped (said), only the failed retries are retried.
    for (const r of retried) await s.waitForExecution(r.id);
    await page.goto('/console/executions?integration=always-fails&status=failed');
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Retry failed' }).click();
    await page.getByText('Retried 2 executions from the failed step').waitFor();
    expect(await page.locator('.notice').first().textContent()).toContain('2 already retried executions were skipped');
    const after = (await s.api('GET', '/executions?integration=always-fails')).body as Array<{ retryOf?: string }>;
    for (const id of ids) expect(after.filter((e) => e.retryOf === id)).toHaveLength(1);
  });
});

// After the bulk retry: its executions of always-fails are all retried by then.
describe('an execution retried before', () => {
  it('an execution retried before shows "Retried as" its retries; retrying it again asks first, saying so', async () => {
    const id = await trigger('always-fails');
    await s.waitForExecution(id);
    const first = (await s.api('POST', `/executions/${id}/retry`)).body.executionId as string;
    await s.waitForExecution(first);
    await page.goto(`/console/executions/${id}`);
    const retriedAs = page.locator('dt', { hasText: 'Retried as' }).locator('xpath=following-sibling::dd[1]');
    expect(await retriedAs.getByRole('link').getAttribute('href')).toBe(`/console/executions/${first}`);
    expect(await page.getByRole('button', { name: 'Retry from failed step' }).count()).toBe(0);

    // Dismissed: nothing is retried.
    let question = '';
    page.once('dialog', (d) => {
      question = d.message();
      void d.dismiss();
    });
    await page.getByRole('button', { name: 'Retry again' }).click();
    await expect.poll(() => question).toContain(`already retried as ${first.slice(-8)}`);
    expect(new URL(page.url()).pathname).toBe(`/console/executions/${id}`);

    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Retry again' }).click();
    await page.getByText('Retried from the failed step: this is the new execution').waitFor();
    const second = new URL(page.url()).pathname.split('/').pop()!;
    expect(second).not.toBe(first);
    expect(await s.waitForExecution(second)).toMatchObject({ retryOf: id });
    await page.goto(`/console/executions/${id}`);
    expect(await retriedAs.getByRole('link').evaluateAll((as) => as.map((a) => a.getAttribute('href')))).toEqual([
      `/console/executions/${first}`,
      `/console/executions/${second}`,
    ]);
    await screenshot(page, 'execution-retried-as');
  });
});

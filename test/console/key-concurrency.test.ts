/**
 * Per-key concurrency through a real server over HTTP: two events for one worker, the first held
 * at a gate — the second waits for its key, and its console page says so (and how many are ahead);
 * the API record carries the key. Released, the second runs after the first.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { type Gate, startGate } from '../runtime/dispatch/helpers.js';
import { startTestServer, tempDir, type TestServer } from '../server/helpers.js';
import { write } from '../triggers/helpers.js';
import { launchBrowser, newContext, signIn } from './helpers.js';

vi.setConfig({ testTimeout: 90_000 });

const dir = tempDir('hcm-key-concurrency-');
let s: TestServer;
let gate: Gate;
let browser: Browser;

beforeAll(async () => {
  gate = await startGate();
  write(
    dir.path,
    'worker-events.yaml',
    `
name: worker-events
concurrency: { key: "{% $trigger.body.data.workerId %}" }
trigger: { type: webhook }
steps:
  - id: apply
    action: core.http
    inputs: { url: "${gate.base}/hold/{% $trigger.body.data.workerId %}", method: GET }
`,
  );
  s = await startTestServer({ dir: dir.path });
  browser = await launchBrowser();
});
afterAll(async () => {
  gate.release();
  await browser?.close();
  await s?.stop();
  await gate.close();
  dir.remove();
});

const post = async (body: unknown): Promise<string> => {
  const res = await fetch(s.urls('worker-events').live, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { executionId: string }).executionId;
};

it('shows an execution queued behind its key, with the key, and runs it after the one ahead', async () => {
  const transfer = await post({ workerId: '21001', event: 'transfer' });
  await s.waitForExecution(transfer, ['running']);
  const termination = await post({ workerId: '21001', event: 'termination' });
  const { body } = await s.api('GET', `/executions/${termination}`);
  expect(body).toMatchObject({ status: 'queued', concurrencyKey: '21001' });

  const page = await (await newContext(browser, s.url)).newPage();
  await signIn(page);
  await page.goto(`/console/executions/${termination}`);
  await expect(page.locator('#key-line').textContent()).resolves.toMatch(/Waiting for its concurrency key 21001: 1 ahead/);
  const term = page.locator('dt', { hasText: 'Concurrency key' });
  await expect(term.locator('xpath=following-sibling::dd[1]').textContent()).resolves.toBe('21001');

  // From now on every held run is let through.
  const opening = setInterval(() => gate.release(), 20);
  const done = await s.waitForExecution(termination).finally(() => clearInterval(opening));
  expect(done.status).toBe('succeeded');
  expect(Date.parse(done.startedAt)).toBeGreaterThanOrEqual(Date.parse((await s.api('GET', `/executions/${transfer}`)).body.finishedAt));
  await page.goto(`/console/executions/${termination}`);
  await expect(page.locator('#key-line').count()).resolves.toBe(0);
});

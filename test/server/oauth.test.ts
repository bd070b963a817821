/** GET /oauth/callback completes the authorization code flow against the HCM sandbox. */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { cliAsync } from '../helpers/cli.js';
import { sandboxEnv } from '../helpers/sandbox-env.js';
import { ADMIN, fixtures, startTestServer, type TestServer } from './helpers.js';

let sb: Sandbox;
let s: TestServer;
beforeAll(async () => {
  sb = await startSandbox({ port: 0, quiet: true });
  s = await startTestServer({
    dir: join(fixtures, 'oauth'),
    env: sandboxEnv(sb),
  });
});
afterAll(async () => {
  await s?.stop();
  await sb?.close();
});

describe('OAuth callback', () => {
  it('bad callbacks are 400 JSON', async () => {
    for (const q of ['', '?code=x', '?code=x&state=unknown', '?error=access_denied&state=s']) {
      const res = await fetch(`${s.url}/oauth/callback${q}`);
      expect(res.status).toBe(400);
      expect(typeof ((await res.json()) as { error: string }).error).toBe('string');
    }
  });

  it('authorize → sandbox login → callback stores tokens; the HCM step then works', async () => {
    // Before authorization the connection has no tokens: the sync run fails.
    const before = await fetch(s.urls('workers').live, { method: 'POST' });
    expect(before.status).toBe(500);

    const start = await s.api('POST', '/integrations/workers/connections/hcm/authorize');
    expect(start.status).toBe(200);
    expect(start.body.redirectUri).toBe(`${s.publicUrl}/oauth/callback`);
    const login = await fetch(start.body.url, { redirect: 'manual' });
    expect(login.status).toBe(302);
    const callback = login.headers.get('location')!;
    expect(callback.startsWith(`${s.publicUrl}/oauth/callback?`)).toBe(true);
    const done = await fetch(callback, { headers: { accept: 'application/json' } });
    expect(done.status).toBe(200);
    expect(await done.json()).toEqual({ status: 'connected', integration: 'workers', connection: 'hcm' });
    // The code is single-use.
    expect((await fetch(callback)).status).toBe(400);

    const after = await fetch(s.urls('workers').live, { method: 'POST' });
    expect(after.status).toBe(200);
    const body = (await after.json()) as { data: unknown[] };
    expect(Array.isArray(body.data)).toBe(true);
    expect(body.data.length).toBeLessThanOrEqual(2);
  });

  it("with --admin-port, the callback page (on the public listener) links back to the console's listener", async () => {
    const split = await startTestServer({ dir: join(fixtures, 'oauth'), env: sandboxEnv(sb), adminPort: 0 });
    try {
      expect(split.adminUrl).not.toBe(split.url);
      const start = await split.api('POST', '/integrations/workers/connections/hcm/authorize');
      const login = await fetch(start.body.url, { redirect: 'manual' });
      const callback = login.headers.get('location')!;
      expect(callback.startsWith(`${split.publicUrl}/oauth/callback?`)).toBe(true);
      const page = await (await fetch(callback)).text();
      const href = /<a href="([^"]+)">Back to the console<\/a>/.exec(page)?.[1];
      expect(href).toBe(`${split.adminUrl}/console/connections`);
      // That link leads to the console (its sign-in), which the public listener does not serve.
      expect((await fetch(href!, { redirect: 'manual' })).status).not.toBe(404);
      expect((await fetch(`${split.url}/console/connections`, { redirect: 'manual' })).status).toBe(404);
    } finally {
      await split.stop();
    }
  });

  it('hcm-runner connect hands the flow to the running server', async () => {
    const r = await cliAsync(['connect', 'workers', 'hcm', '--dir', join(fixtures, 'oauth')], {
      env: { ...sandboxEnv(sb), HCM_RUNNER_PUBLIC_URL: s.publicUrl, HCM_RUNNER_ADMIN_TOKEN: ADMIN },
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const url = /^\s+(http\S+\/authorize\S*)$/m.exec(r.stdout)?.[1];
    expect(url).toBeDefined();
    expect(new URL(url!).searchParams.get('redirect_uri')).toBe(`${s.publicUrl}/oauth/callback`);
    const done = await fetch(url!, { headers: { accept: 'application/json' } });
    expect(await done.json()).toEqual({ status: 'connected', integration: 'workers', connection: 'hcm' });
  });
});

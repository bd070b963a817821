/**
 * Interop with a real, certified OAuth 2.0 / OpenID Connect server (oidc-provider on loopback):
 * the runner's own connect flow (admin API → authorize → /oauth/callback) with PKCE, refresh with
 * rotation, a revoked grant, a wrong client secret, short-lived access tokens, `authorizeParams`
 * (prompt=consent → a refresh token) and the callback's `iss` (RFC 9207). Every call goes over
 * HTTP: webhook → runner → token endpoint and API (a resource server that asks the provider
 * whether each access token is live).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenStoreKey } from '../../src/connectors/hcm/oauth/config.js';
import { resolveConnection } from '../../src/server/oauth.js';
import { ADMIN, fixtures, startTestServer, type TestServer } from '../server/helpers.js';
import { type OidcServer, startOidcServer } from './oidc-server.js';

const SECRET = 'interop-client-secret';
let o: OidcServer;
let s: TestServer;

beforeAll(async () => {
  o = await startOidcServer();
  s = await startTestServer({
    dir: join(fixtures, 'oidc'),
    env: {
      OIDC_AUTHORIZE_URL: o.authorizeUrl,
      OIDC_TOKEN_URL: o.tokenUrl,
      OIDC_API_URL: o.apiUrl,
      OIDC_ISSUER: o.issuer,
      OIDC_CLIENT_SECRET: SECRET,
      OIDC_WRONG_SECRET_REFRESH_TOKEN: 'a-refresh-token-never-checked',
    },
  });
  o.configure(`${s.publicUrl}/oauth/callback`, [
    { clientId: 'runner', clientSecret: SECRET },
    { clientId: 'runner-basic', clientSecret: SECRET, auth: 'client_secret_basic' },
    { clientId: 'runner-plain', clientSecret: SECRET },
    { clientId: 'runner-wrong', clientSecret: SECRET },
    { clientId: 'runner-iss', clientSecret: SECRET },
  ]);
});
afterAll(async () => {
  await s?.stop();
  await o?.close();
});

/** Starts the runner's code flow and approves it at the provider: the redirect back, not yet followed. */
async function authorize(integration: string): Promise<URL> {
  const start = await s.api('POST', `/integrations/${integration}/connections/hcm/authorize`);
  expect(start.status).toBe(200);
  const back = await o.authorize(start.body.url);
  expect(`${back.origin}${back.pathname}`).toBe(`${s.publicUrl}/oauth/callback`);
  return back;
}

async function callback(url: URL | string): Promise<{ status: number; body: { status?: string; error?: string } }> {
  const res = await fetch(url, { headers: { accept: 'application/json' } });
  return { status: res.status, body: (await res.json()) as { status?: string; error?: string } };
}

async function connect(integration: string): Promise<void> {
  const done = await callback(await authorize(integration));
  expect(done).toEqual({ status: 200, body: { status: 'connected', integration, connection: 'hcm' } });
}

async function run(integration: string): Promise<{ status: number; text: string }> {
  const res = await fetch(s.urls(integration).live, { method: 'POST' });
  return { status: res.status, text: await res.text() };
}

async function connection(integration: string) {
  const all = (await s.api('GET', '/connections')).body as Array<Record<string, unknown>>;
  return all.find((c) => c.integration === integration);
}

/** The console's Connections row of `integration` (signed in with the admin token, as the form does). */
async function consoleRow(integration: string): Promise<string> {
  const signIn = await fetch(`${s.url}/console/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { origin: s.publicUrl, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: ADMIN }),
  });
  expect(signIn.status).toBe(303);
  const cookie = signIn.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const html = await (await fetch(`${s.url}/console/connections`, { headers: { cookie } })).text();
  const row = html.split('<tr>').find((r) => r.includes(`/console/integrations/${integration}"`));
  expect(row).toBeDefined();
  return row!;
}

/** As if the access token were now inside its refresh margin (it is still live at the provider). */
async function nearExpiry(integration: string): Promise<void> {
  const key = tokenStoreKey(await resolveConnection(s.runtime, integration, 'hcm'));
  const stored = await s.runtime.store.tokens.get(key);
  expect(stored?.accessToken).toBeTruthy();
  await s.runtime.store.tokens.set(key, { ...stored, refreshAt: Date.now() - 1 });
}

const tokenCalls = (clientId: string) => o.tokenRequests.filter((t) => t.clientId === clientId);

describe('against oidc-provider', () => {
  it('code flow with PKCE and prompt=consent through the runner; the refresh token works and rotates', async () => {
    const start = await s.api('POST', '/integrations/oidc-consent/connections/hcm/authorize');
    const url = new URL(start.body.url);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('prompt')).toBe('consent');
    expect(url.searchParams.get('scope')).toBe('openid offline_access');
    const back = await o.authorize(url.href);
    expect(back.searchParams.get('iss')).toBe(o.issuer);
    expect(await callback(back)).toEqual({ status: 200, body: { status: 'connected', integration: 'oidc-consent', connection: 'hcm' } });
    expect(tokenCalls('runner').map((t) => [t.grantType, t.status])).toEqual([['authorization_code', 200]]);
    expect(await connection('oidc-consent')).toMatchObject({ state: 'authorized', refreshToken: 'stored' });

    const first = await run('oidc-consent');
    expect(first.status).toBe(200);
    expect(JSON.parse(first.text)).toMatchObject({ data: [{ id: 'w1' }] });
    expect(o.apiRequests.at(-1)).toMatchObject({ path: expect.stringMatching(/^\/ccx\/.*\/workers$/), accepted: true });

    const key = tokenStoreKey(await resolveConnection(s.runtime, 'oidc-consent', 'hcm'));
    const before = (await s.runtime.store.tokens.get(key))!;
    await nearExpiry('oidc-consent');
    expect((await run('oidc-consent')).status).toBe(200);
    expect(tokenCalls('runner').map((t) => [t.grantType, t.status])).toEqual([
      ['authorization_code', 200],
      ['refresh_token', 200],
    ]);
    const after = (await s.runtime.store.tokens.get(key))!;
    expect(after.refreshToken).toBeTruthy();
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect(after.accessToken).not.toBe(before.accessToken);
  });

  it('a revoked grant: the connection needs authorization, executions say so, and the token endpoint is not called again', async () => {
    await connect('oidc-consent');
    expect((await run('oidc-consent')).status).toBe(200);
    expect(await o.revokeGrants('runner')).toBeGreaterThan(0);
    await nearExpiry('oidc-consent');
    const calls = tokenCalls('runner').length;

    const failed = await run('oidc-consent');
    expect(failed.status).toBe(500);
    expect(
      tokenCalls('runner')
        .slice(calls)
        .map((t) => [t.grantType, t.status]),
    ).toEqual([['refresh_token', 400]]);
    const view = await connection('oidc-consent');
    expect(view).toMatchObject({ state: 'needs authorization', reason: expect.stringContaining('invalid_grant'), refusedAt: expect.any(String) });
    const row = await consoleRow('oidc-consent');
    expect(row).toContain('needs authorization');
    expect(row).toContain('the token endpoint refused the grant');
    expect(row).toContain('invalid_grant');

    // Every later execution fails at once, naming integration, step, action and the command.
    for (let i = 0; i < 3; i++) {
      const again = await run('oidc-consent');
      expect(again.status).toBe(500);
    }
    expect(tokenCalls('runner').length).toBe(calls + 1);
    const list = await s.api('GET', '/executions?integration=oidc-consent&status=failed&limit=1');
    const record = await s.api('GET', `/executions/${list.body[0].id}`);
    const error = JSON.stringify(record.body.error);
    expect(error).toContain('integration oidc-consent, step workers (hcm.listWorkers)');
    expect(error).toContain('connection hcm needs authorization');
    expect(error).toContain('run `hcm-runner connect oidc-consent hcm`');

    // Connected again, it works again.
    await connect('oidc-consent');
    expect(await connection('oidc-consent')).toMatchObject({ state: 'authorized' });
    expect((await run('oidc-consent')).status).toBe(200);
  });

  it('a wrong client secret is worded as refused client credentials, at connect and on refresh', async () => {
    const done = await callback(await authorize('oidc-wrong-secret'));
    expect(done.status).toBe(400);
    expect(done.body.error).toContain('the client credentials were refused by the token endpoint: check clientId / clientSecret');
    expect(done.body.error).not.toContain('not-the-registered-secret');
    expect(tokenCalls('runner-wrong').map((t) => [t.grantType, t.status])).toEqual([['authorization_code', 401]]);

    // The configured refresh token is sent with the wrong secret: the client, not the token, is refused.
    const failed = await run('oidc-wrong-secret');
    expect(failed.status).toBe(500);
    const list = await s.api('GET', '/executions?integration=oidc-wrong-secret&status=failed&limit=1');
    const error = JSON.stringify((await s.api('GET', `/executions/${list.body[0].id}`)).body.error);
    expect(error).toContain('the client credentials were refused by the token endpoint: check clientId / clientSecret');
    expect(error).not.toContain('refresh token was rejected');
    expect(tokenCalls('runner-wrong').at(-1)).toMatchObject({ grantType: 'refresh_token', status: 401 });
  });

  it('short-lived access tokens (60 s): a fresh token is used as it is, and near expiry 20 concurrent calls refresh once', async () => {
    o.accessTokenTtlSec = 60;
    try {
      await connect('oidc-basic');
      const refreshes = () => tokenCalls('runner-basic').filter((t) => t.grantType === 'refresh_token').length;
      const twenty = async () => {
        const results = await Promise.all(Array.from({ length: 20 }, () => run('oidc-basic')));
        expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
      };
      await twenty();
      for (let i = 0; i < 3; i++) expect((await run('oidc-basic')).status).toBe(200);
      expect(refreshes()).toBe(0);

      await nearExpiry('oidc-basic');
      await twenty();
      for (let i = 0; i < 3; i++) expect((await run('oidc-basic')).status).toBe(200);
      expect(refreshes()).toBe(1);
      expect(tokenCalls('runner-basic').every((t) => t.status === 200)).toBe(true);
    } finally {
      o.accessTokenTtlSec = 3600;
    }
  });

  it('without prompt=consent the server returns no refresh token: connect says so and the connection stays unauthorized', async () => {
    const back = await authorize('oidc-no-consent');
    const done = await callback(back);
    expect(done.status).toBe(400);
    expect(done.body.error).toContain('the server returned no refresh token');
    expect(done.body.error).toContain('prompt: consent');
    expect(tokenCalls('runner-plain').map((t) => [t.grantType, t.status])).toEqual([['authorization_code', 200]]);
    expect(await connection('oidc-no-consent')).toMatchObject({ state: 'needs authorization' });
    expect((await run('oidc-no-consent')).status).toBe(500);
    expect(tokenCalls('runner-plain')).toHaveLength(1);
  });

  it("the callback's iss must be the connection's issuer (RFC 9207): a different one is refused before the code is exchanged", async () => {
    const calls = tokenCalls('runner').length;
    const back = await authorize('oidc-consent');
    back.searchParams.set('iss', 'http://attacker.invalid');
    const forged = await callback(back);
    expect(forged.status).toBe(400);
    expect(forged.body.error).toContain('issuer "http://attacker.invalid"');
    expect(tokenCalls('runner').length).toBe(calls);

    // A connection whose configured issuer is not the server's refuses the server's own answer.
    const wrong = await callback(await authorize('oidc-wrong-issuer'));
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toContain(`issuer ${JSON.stringify(o.issuer)}`);
    expect(wrong.body.error).toContain('http://issuer.invalid');
    expect(tokenCalls('runner-iss')).toHaveLength(0);
    expect(await connection('oidc-wrong-issuer')).toMatchObject({ state: 'needs authorization' });
  });
});

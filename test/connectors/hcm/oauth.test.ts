/** OAuth 2.0: code flow end to end, refresh on expiry and 401, single flight, rotation, failures. */
import { tokenStoreKey } from '../../../src/connectors/hcm/oauth/config.js';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { buildAuthorizeUrl, completeAuthorization, startAuthorization } from '../../../src/connectors/hcm/oauth/index.js';
import { connectionState } from '../../../src/connectors/hcm/oauth/state.js';
import { FileTokenStore } from '../../../src/store/file-token-store.js';
import { apiRequests, connectionFor, failure, harness, invoke, type Harness } from './helpers.js';

const redirectUri = 'http://127.0.0.1:1/oauth/callback';

async function authorizeViaSandbox(h: Harness) {
  const { url, state } = startAuthorization({ integration: h.integration, connection: h.connection, redirectUri, tokens: h.tokens });
  const u = new URL(url);
  expect(u.pathname).toBe('/acme/authorize');
  expect(u.searchParams.get('code_challenge_method')).toBe('S256');
  expect(u.searchParams.get('state')).toBe(state);
  const res = await request(url, { method: 'GET' });
  await res.body.dump();
  expect(res.statusCode).toBe(302);
  const back = new URL(String(res.headers.location));
  expect(back.searchParams.get('state')).toBe(state);
  return completeAuthorization(state, back.searchParams.get('code')!);
}

describe('HCM OAuth 2.0 connection', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });
  const key = () => tokenStoreKey(h!.connection);

  it('builds the authorize URL with <tenant_id> replaced', async () => {
    h = await harness({}, false);
    const url = new URL(
      buildAuthorizeUrl(connectionFor(h.sb, { scopes: 'Staffing Person_Data' }), { redirectUri, state: 's1', codeChallenge: 'cc' }),
    );
    expect(url.pathname).toBe('/acme/authorize');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      response_type: 'code',
      client_id: 'sandbox-client',
      redirect_uri: redirectUri,
      scope: 'Staffing Person_Data',
      state: 's1',
      code_challenge: 'cc',
      code_challenge_method: 'S256',
    });
  });

  it('without tokens fails with needs_authorization naming the connect command, before any API request', async () => {
    h = await harness({}, false);
    const err = await failure(invoke(h, 'listWorkers', {}));
    expect(err.details.code).toBe('needs_authorization');
    expect(err.message).toContain(`hcm-runner connect ${h.integration} hcm`);
    expect(h.sb.requests).toHaveLength(0);
  });

  it('code flow end to end: authorize → 302 with code → exchange (PKCE, body credentials) → action works', async () => {
    h = await harness({}, false);
    const done = await authorizeViaSandbox(h);
    expect(done).toEqual({ integration: h.integration, connection: 'hcm', storeKey: key() });
    const tr = h.sb.tokenRequests.at(-1)!;
    expect(tr.path).toBe('/ccx/oauth2/acme/token');
    expect(tr.body).toMatchObject({
      grant_type: 'authorization_code',
      redirect_uri: redirectUri,
      client_id: 'sandbox-client',
      code_verifier: expect.any(String),
    });
    const stored = await h.tokens.get(key());
    expect(stored?.accessToken).toMatch(/^sbx_at_/);
    expect(stored?.refreshToken).toMatch(/^sbx_rt_/);
    expect(stored!.expiresAt! - Date.now()).toBeGreaterThan(3500_000);
    const res = (await invoke(h, 'listWorkers', { limit: 3 })) as { data: unknown[] };
    expect(res.data).toHaveLength(3);
    expect(apiRequests(h)[0]!.headers.authorization).toBe(`Bearer ${stored!.accessToken}`);
    await expect(completeAuthorization('unknown-state', 'x')).rejects.toMatchObject({ details: { code: 'invalid_state' } });
  });

  it('sends client credentials as HTTP Basic when clientAuth is basic', async () => {
    h = await harness();
    h.connection = connectionFor(h.sb, { clientAuth: 'basic', refreshToken: h.sb.issueRefreshToken() });
    await invoke(h, 'listWorkers', { limit: 1 });
    const tr = h.sb.tokenRequests.at(-1)!;
    expect(tr.headers.authorization).toBe(`Basic ${Buffer.from('sandbox-client:sandbox-secret').toString('base64')}`);
    expect(tr.body).not.toHaveProperty('client_secret');
  });

  it('on a 401 refreshes once and retries the request', async () => {
    h = await harness();
    await invoke(h, 'listWorkers', { limit: 1 });
    const before = await h.tokens.get(key());
    h.sb.expireAllTokens();
    h.sb.clearRequests();
    const res = (await invoke(h, 'listWorkers', { limit: 1 })) as { data: unknown[] };
    expect(res.data).toHaveLength(1);
    expect(apiRequests(h).map((r) => r.headers.authorization)).toEqual([
      `Bearer ${before!.accessToken}`,
      expect.not.stringContaining(before!.accessToken!),
    ]);
    expect(h.sb.tokenRequests).toHaveLength(1);
    expect(h.sb.tokenRequests[0]!.body).toMatchObject({ grant_type: 'refresh_token', refresh_token: before!.refreshToken });
  });

  it('refreshes proactively once inside the refresh margin (before expiry, no 401)', async () => {
    h = await harness({ tokenLifetimeSec: 120 });
    await invoke(h, 'listWorkers', { limit: 1 });
    const stored = (await h.tokens.get(key()))!;
    // As if 100 of the 120 s had passed: inside the margin (24 s), the sandbox still accepts it.
    await h.tokens.set(key(), { ...stored, refreshAt: Date.now() - 1 });
    h.sb.clearRequests();
    await invoke(h, 'listWorkers', { limit: 1 });
    expect(h.sb.tokenRequests).toHaveLength(1); // refreshed before the call, no 401
    expect(apiRequests(h)).toHaveLength(1);
    expect(apiRequests(h)[0]!.headers.authorization).not.toBe(`Bearer ${stored.accessToken}`);
  });

  it('the refresh margin is the smaller of 5 minutes and a fifth of the lifetime', async () => {
    for (const [lifetimeSec, marginMs] of [
      [3600, 300_000],
      [120, 24_000],
      [60, 12_000],
    ] as const) {
      h = await harness({ tokenLifetimeSec: lifetimeSec });
      await invoke(h, 'listWorkers', { limit: 1 });
      const stored = (await h.tokens.get(key()))!;
      expect(stored.expiresAt! - stored.refreshAt!).toBe(marginMs);
      // A fresh short-lived token is used as it is: no refresh before every call.
      h.sb.clearRequests();
      for (let i = 0; i < 5; i++) await invoke(h, 'listWorkers', { limit: 1 });
      await Promise.all(Array.from({ length: 20 }, () => invoke(h!, 'listWorkers', { limit: 1 })));
      expect(h.sb.tokenRequests).toHaveLength(0);
      await h.close();
      h = undefined;
    }
  });

  it('exactly one refresh under 20 concurrent invokes (first use and after expiry)', async () => {
    h = await harness();
    const twenty = () => Promise.all(Array.from({ length: 20 }, (_, i) => invoke(h!, 'listWorkers', { limit: 1, offset: i })));
    await twenty();
    expect(h.sb.tokenRequests).toHaveLength(1);
    h.sb.expireAllTokens();
    h.sb.clearRequests();
    const results = (await twenty()) as Array<{ data: unknown[] }>;
    expect(results.every((r) => r.data.length === 1)).toBe(true);
    expect(h.sb.tokenRequests).toHaveLength(1);
  });

  it('keeps a rotated refresh token; the old one no longer works', async () => {
    h = await harness();
    await invoke(h, 'listWorkers', { limit: 1 });
    const first = (await h.tokens.get(key()))!;
    h.sb.expireAllTokens();
    await invoke(h, 'listWorkers', { limit: 1 });
    const second = (await h.tokens.get(key()))!;
    expect(second.refreshToken).toBeTruthy();
    expect(second.refreshToken).not.toBe(first.refreshToken);
    const old = await request(h.sb.tokenUrl.replace('<tenant_id>', 'acme'), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: first.refreshToken!,
        client_id: 'sandbox-client',
        client_secret: 'sandbox-secret',
      }).toString(),
    });
    await old.body.dump();
    expect(old.statusCode).toBe(400);
    h.sb.expireAllTokens();
    await expect(invoke(h, 'listWorkers', { limit: 1 })).resolves.toBeTruthy();
  });

  it('a rejected refresh token says which connection and what to do, without secrets', async () => {
    h = await harness();
    h.connection = connectionFor(h.sb, { refreshToken: 'sbx_rt_revoked-or-unknown' });
    const err = await failure(invoke(h, 'listWorkers', {}));
    expect(err.details.code).toBe('needs_authorization');
    expect(err.message).toContain('connection hcm');
    expect(err.message).toContain(`hcm-runner connect ${h.integration} hcm`);
    expect(err.message).not.toContain('sbx_rt_revoked-or-unknown');
    expect(err.message).not.toContain('sandbox-secret');
    expect(h.sb.requests).toHaveLength(0);
  });

  it('a revoked grant marks the connection needs authorization, durably: no further token requests until connected again', async () => {
    h = await harness();
    await invoke(h, 'listWorkers', { limit: 1 });
    expect(await connectionState(h.connection, h.tokens)).toMatchObject({ state: 'authorized', refreshToken: 'stored' });
    h.sb.revokeGrants();
    h.sb.clearRequests();
    const err = await failure(invoke(h, 'listWorkers', { limit: 1 }));
    expect(err.details.code).toBe('needs_authorization');
    expect(err.message).toContain('invalid_grant');
    expect(err.message).toContain(`hcm-runner connect ${h.integration} hcm`);
    expect(h.sb.tokenRequests).toHaveLength(1);
    const state = await connectionState(h.connection, h.tokens);
    expect(state).toMatchObject({ state: 'needs authorization', reason: expect.stringContaining('invalid_grant'), refusedAt: expect.any(String) });
    // Kept in the store (a new process sees it), and nothing is sent again — not even the
    // configured refresh token the store was first filled from, which the server refused too.
    const reopened = new FileTokenStore(h.dir);
    expect((await reopened.get(key()))?.needsAuthorization).toBeDefined();
    h.sb.clearRequests();
    for (let i = 0; i < 3; i++) expect((await failure(invoke(h, 'listWorkers', { limit: 1 }))).details.code).toBe('needs_authorization');
    expect(h.sb.requests).toHaveLength(0);
    // Connecting again replaces the record.
    await authorizeViaSandbox(h);
    expect(await connectionState(h.connection, h.tokens)).toMatchObject({ state: 'authorized' });
    await expect(invoke(h, 'listWorkers', { limit: 1 })).resolves.toBeTruthy();
  });

  it('a refused configured refresh token is not sent again; a different configured one is tried', async () => {
    h = await harness();
    h.connection = connectionFor(h.sb, { refreshToken: 'sbx_rt_revoked-or-unknown' });
    await failure(invoke(h, 'listWorkers', {}));
    h.sb.clearRequests();
    await failure(invoke(h, 'listWorkers', {}));
    expect(h.sb.tokenRequests).toHaveLength(0);
    h.connection = connectionFor(h.sb, { refreshToken: h.sb.issueRefreshToken() });
    expect(await connectionState(h.connection, h.tokens)).toMatchObject({ state: 'authorized', refreshToken: 'configured' });
    await expect(invoke(h, 'listWorkers', { limit: 1 })).resolves.toBeTruthy();
    expect(h.sb.tokenRequests).toHaveLength(1);
  });

  it('a wrong client secret says the client credentials were refused and which keys to check', async () => {
    h = await harness();
    h.connection = connectionFor(h.sb, { clientSecret: 'not-the-secret', refreshToken: h.sb.issueRefreshToken() });
    const err = await failure(invoke(h, 'listWorkers', {}));
    expect(err.details).toMatchObject({ code: 'client_refused', status: 401, retryable: false });
    expect(err.message).toContain('the client credentials were refused by the token endpoint: check clientId / clientSecret');
    expect(err.message).toContain('connection hcm');
    expect(err.message).not.toContain('refresh token was rejected');
    expect(err.message).not.toContain('not-the-secret');
    // Not a grant problem: the connection is not marked, the right secret works at once.
    expect((await h.tokens.get(key()))?.needsAuthorization).toBeUndefined();
    h.connection = connectionFor(h.sb, { refreshToken: h.connection.config.refreshToken });
    await expect(invoke(h, 'listWorkers', { limit: 1 })).resolves.toBeTruthy();
  });

  it('a step aborted while its token refresh is in flight fails at once, without calling the API', async () => {
    h = await harness();
    // The token endpoint answers after 60 s: only the step's signal can end the wait sooner.
    h.sb.addFault({ match: { pathIncludes: '/oauth2/' }, latencyMs: 60_000, times: 1 });
    const controller = new AbortController();
    const pending = failure(invoke(h, 'listWorkers', {}, controller.signal));
    setTimeout(() => controller.abort(new Error('shutting down')), 100);
    const err = await pending;
    expect(err.message).toMatch(/abort|shutting down/i);
    expect(apiRequests(h)).toHaveLength(0);
  });

  it('a token endpoint outage is a retryable refresh failure', async () => {
    h = await harness();
    h.sb.addFault({ match: { pathIncludes: '/oauth2/' }, status: 503, times: 1 });
    const err = await failure(invoke(h, 'listWorkers', {}));
    expect(err.details).toMatchObject({ code: 'refresh_failed', retryable: true });
    expect(err.message).toContain('connection hcm');
  });
});

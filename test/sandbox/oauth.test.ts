import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { CLIENT, start, tokenRequest } from './helpers.js';

let sb: Sandbox;
beforeAll(async () => {
  sb = await start();
});
afterAll(async () => {
  await sb.close();
});

const REDIRECT = 'http://127.0.0.1:9999/oauth/callback';

async function authorize(params: Record<string, string>) {
  const u = new URL(`${sb.url}/acme/authorize`);
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
  return fetch(u, { redirect: 'manual' });
}

describe('sandbox OAuth', () => {
  it('exposes the URL templates', () => {
    expect(sb.authorizeUrl).toBe(`${sb.url}/<tenant_id>/authorize`);
    expect(sb.tokenUrl).toBe(`${sb.url}/ccx/oauth2/<tenant_id>/token`);
    expect(sb.apiUrl).toBe(`${sb.url}/ccx`);
    expect(sb.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('runs the code flow with PKCE S256 and echoes state', async () => {
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const res = await authorize({
      response_type: 'code',
      client_id: CLIENT.id,
      redirect_uri: REDIRECT,
      scope: 'Staffing',
      state: 'xyz 123',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    expect(res.status).toBe(302);
    const loc = new URL(res.headers.get('location')!);
    expect(loc.origin + loc.pathname).toBe(REDIRECT);
    expect(loc.searchParams.get('state')).toBe('xyz 123');
    const code = loc.searchParams.get('code')!;
    expect(code).toBeTruthy();

    const bad = await tokenRequest(sb, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      code_verifier: 'wrong-verifier',
      client_id: CLIENT.id,
      client_secret: CLIENT.secret,
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: 'invalid_grant' });

    // The failed attempt consumed the code: run the flow again with the right verifier.
    const res2 = await authorize({
      response_type: 'code',
      client_id: CLIENT.id,
      redirect_uri: REDIRECT,
      state: 's2',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const code2 = new URL(res2.headers.get('location')!).searchParams.get('code')!;
    const ok = await tokenRequest(sb, {
      grant_type: 'authorization_code',
      code: code2,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
      client_id: CLIENT.id,
      client_secret: CLIENT.secret,
    });
    expect(ok.status).toBe(200);
    const tok = (await ok.json()) as Record<string, unknown>;
    expect(tok).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
    expect(typeof tok.access_token).toBe('string');
    expect(typeof tok.refresh_token).toBe('string');

    // Codes are single use.
    const again = await tokenRequest(sb, {
      grant_type: 'authorization_code',
      code: code2,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
      client_id: CLIENT.id,
      client_secret: CLIENT.secret,
    });
    expect(again.status).toBe(400);

    const api = await fetch(`${sb.apiUrl}/staffing/v7/workers?limit=1`, { headers: { authorization: `Bearer ${tok.access_token}` } });
    expect(api.status).toBe(200);
    expect(sb.tokenRequests.some((r) => r.body && (r.body as Record<string, string>).code === code2)).toBe(true);
  });

  it('rejects a code exchange without the verifier when a challenge was sent', async () => {
    const res = await authorize({
      response_type: 'code',
      client_id: CLIENT.id,
      redirect_uri: REDIRECT,
      code_challenge: 'abc',
      code_challenge_method: 'S256',
    });
    const code = new URL(res.headers.get('location')!).searchParams.get('code')!;
    const r = await tokenRequest(sb, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT }, { id: CLIENT.id, secret: CLIENT.secret });
    expect(r.status).toBe(400);
  });

  it('answers 400 JSON for an unknown client or a missing redirect_uri', async () => {
    const a = await authorize({ response_type: 'code', client_id: 'nope', redirect_uri: REDIRECT });
    expect(a.status).toBe(400);
    expect(await a.json()).toMatchObject({ error: 'invalid_client' });
    const b = await authorize({ response_type: 'code', client_id: CLIENT.id });
    expect(b.status).toBe(400);
    expect(((await b.json()) as { error: string }).error).toBeTruthy();
  });

  it('rotates refresh tokens and rejects the old one', async () => {
    const rt = sb.issueRefreshToken();
    const r1 = await tokenRequest(sb, { grant_type: 'refresh_token', refresh_token: rt }, { id: CLIENT.id, secret: CLIENT.secret });
    expect(r1.status).toBe(200);
    const t1 = (await r1.json()) as { refresh_token: string; access_token: string };
    expect(t1.refresh_token).not.toBe(rt);
    const old = await tokenRequest(sb, { grant_type: 'refresh_token', refresh_token: rt, client_id: CLIENT.id, client_secret: CLIENT.secret });
    expect(old.status).toBe(400);
    expect(await old.json()).toEqual({ error: 'invalid_grant', error_description: expect.any(String) });
    const r2 = await tokenRequest(sb, {
      grant_type: 'refresh_token',
      refresh_token: t1.refresh_token,
      client_id: CLIENT.id,
      client_secret: CLIENT.secret,
    });
    expect(r2.status).toBe(200);
  });

  it('keeps the refresh token when rotation is off', async () => {
    const s2 = await start({ rotateRefreshTokens: false, tokenLifetimeSec: 120 });
    try {
      const rt = s2.issueRefreshToken();
      for (let i = 0; i < 2; i++) {
        const r = await tokenRequest(s2, { grant_type: 'refresh_token', refresh_token: rt, client_id: CLIENT.id, client_secret: CLIENT.secret });
        expect(r.status).toBe(200);
        expect(await r.json()).toMatchObject({ refresh_token: rt, expires_in: 120 });
      }
    } finally {
      await s2.close();
    }
  });

  it('accepts client credentials via Basic or body and rejects a bad client with 401', async () => {
    const viaBasic = await tokenRequest(
      sb,
      { grant_type: 'refresh_token', refresh_token: sb.issueRefreshToken() },
      { id: CLIENT.id, secret: CLIENT.secret },
    );
    expect(viaBasic.status).toBe(200);
    const viaBody = await tokenRequest(sb, {
      grant_type: 'refresh_token',
      refresh_token: sb.issueRefreshToken(),
      client_id: CLIENT.id,
      client_secret: CLIENT.secret,
    });
    expect(viaBody.status).toBe(200);
    const badBasic = await tokenRequest(
      sb,
      { grant_type: 'refresh_token', refresh_token: sb.issueRefreshToken() },
      { id: CLIENT.id, secret: 'wrong' },
    );
    expect(badBasic.status).toBe(401);
    expect(await badBasic.json()).toMatchObject({ error: 'invalid_client' });
    const badBody = await tokenRequest(sb, {
      grant_type: 'refresh_token',
      refresh_token: sb.issueRefreshToken(),
      client_id: 'other',
      client_secret: CLIENT.secret,
    });
    expect(badBody.status).toBe(401);
    const none = await tokenRequest(sb, { grant_type: 'refresh_token', refresh_token: sb.issueRefreshToken() });
    expect(none.status).toBe(401);
  });

  it('answers 401 without a token, with a bogus token, and after expiry', async () => {
    const url = `${sb.apiUrl}/staffing/v7/workers`;
    const none = await fetch(url);
    expect(none.status).toBe(401);
    expect(await none.json()).toEqual({ error: 'invalid or expired access token' });
    expect((await fetch(url, { headers: { authorization: 'Bearer nope' } })).status).toBe(401);
    const r = await tokenRequest(sb, {
      grant_type: 'refresh_token',
      refresh_token: sb.issueRefreshToken(),
      client_id: CLIENT.id,
      client_secret: CLIENT.secret,
    });
    const { access_token } = (await r.json()) as { access_token: string };
    expect((await fetch(url, { headers: { authorization: `Bearer ${access_token}` } })).status).toBe(200);
    sb.expireAllTokens();
    expect((await fetch(url, { headers: { authorization: `Bearer ${access_token}` } })).status).toBe(401);
  });

  it('expires tokens after tokenLifetimeSec and via POST /__sandbox/expire-tokens', async () => {
    const s2 = await start({ tokenLifetimeSec: 1 });
    try {
      const get = async (rt: string) =>
        (
          (await (
            await tokenRequest(s2, { grant_type: 'refresh_token', refresh_token: rt, client_id: CLIENT.id, client_secret: CLIENT.secret })
          ).json()) as { access_token: string }
        ).access_token;
      const at = await get(s2.issueRefreshToken());
      const call = (t: string) => fetch(`${s2.apiUrl}/person/v4/people?limit=1`, { headers: { authorization: `Bearer ${t}` } });
      expect((await call(at)).status).toBe(200);
      await new Promise((r) => setTimeout(r, 1100));
      expect((await call(at)).status).toBe(401);
      const at2 = await get(s2.issueRefreshToken());
      expect((await call(at2)).status).toBe(200);
      expect((await fetch(`${s2.url}/__sandbox/expire-tokens`, { method: 'POST' })).status).toBe(200);
      expect((await call(at2)).status).toBe(401);
    } finally {
      await s2.close();
    }
  });

  it('POST /__sandbox/revoke-grants revokes access and refresh tokens (refresh answers invalid_grant)', async () => {
    const rt = sb.issueRefreshToken();
    const r = await tokenRequest(sb, { grant_type: 'refresh_token', refresh_token: rt, client_id: CLIENT.id, client_secret: CLIENT.secret });
    const { access_token, refresh_token } = (await r.json()) as { access_token: string; refresh_token: string };
    const call = () => fetch(`${sb.apiUrl}/person/v4/people?limit=1`, { headers: { authorization: `Bearer ${access_token}` } });
    expect((await call()).status).toBe(200);
    expect((await fetch(`${sb.url}/__sandbox/revoke-grants`, { method: 'POST' })).status).toBe(200);
    expect((await call()).status).toBe(401);
    const again = await tokenRequest(sb, { grant_type: 'refresh_token', refresh_token, client_id: CLIENT.id, client_secret: CLIENT.secret });
    expect(again.status).toBe(400);
    expect(await again.json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('advertises PKCE support', async () => {
    const r = await fetch(`${sb.url}/.well-known/oauth-authorization-server`);
    expect(await r.json()).toMatchObject({ code_challenge_methods_supported: ['S256'] });
  });
});

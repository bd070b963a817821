import { createHash, randomBytes } from 'node:crypto';
import type { Hono } from 'hono';
import type { Ctx, SandboxEnv } from './http.js';

export interface OAuthConfig {
  clientId: string;
  clientSecret: string;
  tokenLifetimeSec: number;
  rotateRefreshTokens: boolean;
}
interface CodeGrant {
  clientId: string;
  redirectUri: string;
  scope: string;
  challenge?: string;
  method?: string;
  tenant: string;
  expiresAt: number;
}
interface Grant {
  clientId: string;
  scope: string;
  tenant: string;
}

const DEFAULT_SCOPE = 'Staffing Time_Tracking Absence_Management Person_Data Accounts_Payable Business_Process Connect Customer_Accounts Prism';
const rand = (prefix: string) => prefix + randomBytes(24).toString('base64url');
const oauthError = (c: Ctx, status: number, error: string, description?: string, headers: Record<string, string> = {}) =>
  c.json({ error, ...(description ? { error_description: description } : {}) }, status as 400, { 'cache-control': 'no-store', ...headers });

/** Issued codes, access tokens and refresh tokens. */
export class OAuthState {
  codes = new Map<string, CodeGrant>();
  accessTokens = new Map<string, Grant & { expiresAt: number }>();
  refreshTokens = new Map<string, Grant>();
  constructor(public cfg: OAuthConfig) {}

  issueRefreshToken(scope = DEFAULT_SCOPE, tenant = 'sandbox'): string {
    const rt = rand('sbx_rt_');
    this.refreshTokens.set(rt, { clientId: this.cfg.clientId, scope, tenant });
    return rt;
  }
  issueTokens(grant: Grant, refreshToken?: string) {
    const at = rand('sbx_at_');
    this.accessTokens.set(at, { ...grant, expiresAt: Date.now() + this.cfg.tokenLifetimeSec * 1000 });
    let rt = refreshToken;
    if (!rt || this.cfg.rotateRefreshTokens) {
      if (rt) this.refreshTokens.delete(rt);
      rt = rand('sbx_rt_');
      this.refreshTokens.set(rt, grant);
    }
    return { access_token: at, token_type: 'Bearer', expires_in: this.cfg.tokenLifetimeSec, refresh_token: rt, scope: grant.scope };
  }
  isValidAccessToken(token: string): boolean {
    const t = this.accessTokens.get(token);
    if (!t) return false;
    if (t.expiresAt <= Date.now()) {
      this.accessTokens.delete(token);
      return false;
    }
    return true;
  }
  expireAll(): void {
    this.accessTokens.clear();
  }
  /** Revokes every grant, as a tenant administrator would: access and refresh tokens stop working. */
  revokeAll(): void {
    this.accessTokens.clear();
    this.refreshTokens.clear();
  }
}

function clientCredentials(c: Ctx, form: Record<string, string>): { id?: string; secret?: string; basic: boolean } {
  const auth = c.req.header('authorization');
  if (auth && /^basic /i.test(auth)) {
    const decoded = Buffer.from(auth.slice(6).trim(), 'base64').toString('utf8');
    const i = decoded.indexOf(':');
    const dec = (s: string) => {
      try {
        return decodeURIComponent(s.replace(/\+/g, ' '));
      } catch {
        return s;
      }
    };
    return { id: dec(i === -1 ? decoded : decoded.slice(0, i)), secret: dec(i === -1 ? '' : decoded.slice(i + 1)), basic: true };
  }
  return { id: form.client_id, secret: form.client_secret, basic: false };
}

function verifyPkce(grant: CodeGrant, verifier: string | undefined): boolean {
  if (!grant.challenge) return true;
  if (!verifier) return false;
  if ((grant.method ?? 'plain') === 'S256') return createHash('sha256').update(verifier).digest('base64url') === grant.challenge;
  return verifier === grant.challenge;
}

export function registerOAuth(app: Hono<SandboxEnv>, st: OAuthState): void {
  app.get('/.well-known/oauth-authorization-server', (c) => {
    const o = new URL(c.req.url).origin;
    return c.json({
      issuer: o,
      authorization_endpoint: `${o}/sandbox/authorize`,
      token_endpoint: `${o}/ccx/oauth2/sandbox/token`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      code_challenge_methods_supported: ['S256'],
    });
  });

  app.get('/:tenant/authorize', (c) => {
    const q = c.req.query();
    if (q.client_id !== st.cfg.clientId) return oauthError(c, 400, 'invalid_client', `unknown client_id: ${q.client_id ?? ''}`);
    if (!q.redirect_uri) return oauthError(c, 400, 'invalid_request', 'redirect_uri is required');
    let target: URL;
    try {
      target = new URL(q.redirect_uri);
    } catch {
      return oauthError(c, 400, 'invalid_request', 'redirect_uri is not an absolute URL');
    }
    const add = (k: string, v: string | undefined) => v !== undefined && target.searchParams.set(k, v);
    if (q.response_type !== 'code') {
      add('error', 'unsupported_response_type');
      add('state', q.state);
      return c.redirect(target.toString(), 302);
    }
    if (q.code_challenge_method && !['S256', 'plain'].includes(q.code_challenge_method)) {
      add('error', 'invalid_request');
      add('error_description', 'unsupported code_challenge_method');
      add('state', q.state);
      return c.redirect(target.toString(), 302);
    }
    const code = rand('sbx_code_');
    st.codes.set(code, {
      clientId: q.client_id,
      redirectUri: q.redirect_uri,
      scope: q.scope || DEFAULT_SCOPE,
      tenant: c.req.param('tenant'),
      challenge: q.code_challenge || undefined,
      method: q.code_challenge ? q.code_challenge_method || 'plain' : undefined,
      expiresAt: Date.now() + 600_000,
    });
    add('code', code);
    add('state', q.state);
    return c.redirect(target.toString(), 302);
  });

  app.post('/ccx/oauth2/:tenant/token', (c) => {
    const body = c.get('body');
    const form = (body && typeof body === 'object' && !Array.isArray(body) ? body : {}) as Record<string, string>;
    const cred = clientCredentials(c, form);
    if (cred.id !== st.cfg.clientId || cred.secret !== st.cfg.clientSecret)
      return oauthError(c, 401, 'invalid_client', 'client authentication failed', cred.basic ? { 'www-authenticate': 'Basic realm="sandbox"' } : {});
    if (form.grant_type === 'authorization_code') {
      const grant = form.code ? st.codes.get(form.code) : undefined;
      if (form.code) st.codes.delete(form.code);
      if (!grant || grant.expiresAt < Date.now() || grant.clientId !== cred.id)
        return oauthError(c, 400, 'invalid_grant', 'unknown, used or expired code');
      if (form.redirect_uri !== grant.redirectUri) return oauthError(c, 400, 'invalid_grant', 'redirect_uri does not match the authorize request');
      if (!verifyPkce(grant, form.code_verifier)) return oauthError(c, 400, 'invalid_grant', 'PKCE verification failed');
      return c.json(st.issueTokens({ clientId: grant.clientId, scope: grant.scope, tenant: grant.tenant }), 200, { 'cache-control': 'no-store' });
    }
    if (form.grant_type === 'refresh_token') {
      const grant = form.refresh_token ? st.refreshTokens.get(form.refresh_token) : undefined;
      if (!grant || grant.clientId !== cred.id) return oauthError(c, 400, 'invalid_grant', 'unknown or revoked refresh token');
      return c.json(st.issueTokens(grant, form.refresh_token), 200, { 'cache-control': 'no-store' });
    }
    return oauthError(c, 400, 'unsupported_grant_type', `unsupported grant_type: ${form.grant_type ?? ''}`);
  });
}

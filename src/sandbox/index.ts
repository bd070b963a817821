import { serve, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import type { AddressInfo } from 'node:net';
import { registerAdmin } from './admin.js';
import { seedDb } from './data/seed.js';
import { Faults, faultMiddleware, type Fault } from './faults.js';
import { HttpError, type SandboxEnv } from './http.js';
import { OAuthState } from './oauth.js';
import { registerOAuth } from './oauth.js';
import { recorder, type RecordedRequest } from './recorder.js';
import { registerApiRoutes } from './routes/index.js';
import type { Db } from './store.js';
import { TenantLimit, tenantLimitMiddleware, type TenantLimitSettings, type TenantLimitStats } from './tenant-limit.js';

export type { Fault } from './faults.js';
export type { RecordedRequest, RecordedFile } from './recorder.js';
export type { SandboxEnv } from './http.js';
export type { TenantLimitSettings, TenantLimitStats } from './tenant-limit.js';

export interface SandboxOptions {
  port?: number;
  host?: string;
  /** Access token lifetime in seconds (default 3600). */
  tokenLifetimeSec?: number;
  /** Seed for the deterministic data set (default 1). */
  seed?: number;
  /** Issue a new refresh token on every refresh and revoke the old one (default true). */
  rotateRefreshTokens?: boolean;
  clientId?: string;
  clientSecret?: string;
  /** When false (the default), startSandbox logs one line per request to stderr. */
  quiet?: boolean;
  /** The tenant's rate limit (off by default): 429 + Retry-After beyond it (tenant-limit.ts). */
  tenantLimit?: TenantLimitSettings;
}

export interface SandboxState {
  db: Db;
  oauth: OAuthState;
  faults: Faults;
  tenantLimit: TenantLimit;
  requests: RecordedRequest[];
  tokenRequests: RecordedRequest[];
  options: Required<Omit<SandboxOptions, 'port' | 'host' | 'tenantLimit'>>;
}

export interface Sandbox {
  url: string;
  apiUrl: string;
  authorizeUrl: string;
  tokenUrl: string;
  port: number;
  requests: RecordedRequest[];
  tokenRequests: RecordedRequest[];
  clearRequests(): void;
  addFault(f: Fault): void;
  clearFaults(): void;
  /** Sets the tenant's rate limit (`{}` turns it off) and starts its counts again. */
  setTenantLimit(settings: TenantLimitSettings): void;
  /** What the tenant limit saw since it was last set. */
  tenantLimitStats(): TenantLimitStats;
  expireAllTokens(): void;
  /** Revokes every grant: refreshing answers 400 invalid_grant until the connection is authorized again. */
  revokeGrants(): void;
  issueRefreshToken(): string;
  close(): Promise<void>;
  app: Hono<SandboxEnv>;
  state: SandboxState;
}

export const DEFAULT_CLIENT_ID = 'sandbox-client';
export const DEFAULT_CLIENT_SECRET = 'sandbox-secret';

/** Build the sandbox app without listening (usable with app.request() in-process). */
export function createSandboxApp(opts: SandboxOptions = {}): { app: Hono<SandboxEnv>; state: SandboxState } {
  const options = {
    tokenLifetimeSec: opts.tokenLifetimeSec ?? 3600,
    seed: opts.seed ?? 1,
    rotateRefreshTokens: opts.rotateRefreshTokens ?? true,
    clientId: opts.clientId ?? DEFAULT_CLIENT_ID,
    clientSecret: opts.clientSecret ?? DEFAULT_CLIENT_SECRET,
    quiet: opts.quiet ?? false,
  };
  const state: SandboxState = {
    db: seedDb(options.seed),
    oauth: new OAuthState(options),
    faults: new Faults(),
    tenantLimit: new TenantLimit(),
    requests: [],
    tokenRequests: [],
    options,
  };
  const app = new Hono<SandboxEnv>();
  if (!options.quiet) {
    app.use('*', async (c, next) => {
      const t = Date.now();
      await next();
      process.stderr.write(`sandbox ${c.req.method} ${c.req.path} ${c.res.status} ${Date.now() - t}ms\n`);
    });
  }
  app.use('*', recorder(state.requests, state.tokenRequests));
  app.use('*', faultMiddleware(state.faults));
  if (opts.tenantLimit) state.tenantLimit.set(opts.tenantLimit);
  app.use('*', tenantLimitMiddleware(state.tenantLimit));
  registerAdmin(app, state);
  registerOAuth(app, state.oauth);
  app.use('/ccx/*', async (c, next) => {
    if (c.req.path.startsWith('/ccx/oauth2/')) return next();
    const m = /^Bearer\s+(.+)$/i.exec(c.req.header('authorization') ?? '');
    if (!m || !state.oauth.isValidAccessToken(m[1]!.trim()))
      return c.json({ error: 'invalid or expired access token' }, 401, { 'www-authenticate': 'Bearer error="invalid_token"' });
    return next();
  });
  registerApiRoutes(app, state.db);
  app.notFound((c) => c.json({ error: `resource not found: ${c.req.method} ${c.req.path}` }, 404));
  app.onError((err, c) => {
    if (err instanceof HttpError) return c.json(err.body(), err.status as 400);
    return c.json({ error: `internal sandbox error: ${err.message}` }, 500);
  });
  return { app, state };
}

/** Start the sandbox on host:port (port 0 = a random free port; default host 127.0.0.1). */
export async function startSandbox(opts: SandboxOptions = {}): Promise<Sandbox> {
  const { app, state } = createSandboxApp(opts);
  const hostname = opts.host ?? '127.0.0.1';
  const server: ServerType = await new Promise((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port: opts.port ?? 0, hostname }, () => resolve(s));
    s.once('error', reject);
  });
  const port = (server.address() as AddressInfo).port;
  const shownHost = hostname === '0.0.0.0' || hostname === '::' ? '127.0.0.1' : hostname.includes(':') ? `[${hostname}]` : hostname;
  const url = `http://${shownHost}:${port}`;
  return {
    url,
    apiUrl: `${url}/ccx`,
    authorizeUrl: `${url}/<tenant_id>/authorize`,
    tokenUrl: `${url}/ccx/oauth2/<tenant_id>/token`,
    port,
    requests: state.requests,
    tokenRequests: state.tokenRequests,
    clearRequests: () => {
      state.requests.length = 0;
      state.tokenRequests.length = 0;
    },
    addFault: (f) => state.faults.add(f),
    clearFaults: () => state.faults.clear(),
    setTenantLimit: (settings) => state.tenantLimit.set(settings),
    tenantLimitStats: () => state.tenantLimit.stats(),
    expireAllTokens: () => state.oauth.expireAll(),
    revokeGrants: () => state.oauth.revokeAll(),
    issueRefreshToken: () => state.oauth.issueRefreshToken(),
    close: () =>
      new Promise<void>((resolve) => {
        const s = server as import('node:http').Server;
        s.close(() => resolve());
        s.closeAllConnections?.();
      }),
    app,
    state,
  };
}

import type { Hono } from 'hono';
import type { Faults, Fault } from './faults.js';
import type { SandboxEnv } from './http.js';
import type { OAuthState } from './oauth.js';
import type { RecordedRequest } from './recorder.js';
import { checkTenantLimit, type TenantLimit } from './tenant-limit.js';

export interface AdminDeps {
  faults: Faults;
  tenantLimit: TenantLimit;
  oauth: OAuthState;
  requests: RecordedRequest[];
  tokenRequests: RecordedRequest[];
}

/** Test-control routes under /__sandbox (no auth). */
export function registerAdmin(app: Hono<SandboxEnv>, d: AdminDeps): void {
  app.get('/__sandbox/faults', (c) => c.json({ data: d.faults.snapshot() }));
  app.post('/__sandbox/faults', async (c) => {
    let f: Fault;
    try {
      f = (await c.req.json()) as Fault;
    } catch {
      return c.json({ error: 'body must be a JSON fault' }, 400);
    }
    if (!f || typeof f !== 'object' || Array.isArray(f)) return c.json({ error: 'body must be a JSON fault' }, 400);
    d.faults.add(f);
    return c.json({ ok: true, faults: d.faults.snapshot().length }, 201);
  });
  app.delete('/__sandbox/faults', (c) => {
    d.faults.clear();
    return c.json({});
  });
  app.get('/__sandbox/rate-limit', (c) => c.json({ settings: d.tenantLimit.settings, stats: d.tenantLimit.stats() }));
  app.put('/__sandbox/rate-limit', async (c) => {
    const checked = checkTenantLimit(await c.req.json().catch(() => undefined));
    if (typeof checked === 'string') return c.json({ error: checked }, 400);
    d.tenantLimit.set(checked);
    return c.json({ settings: d.tenantLimit.settings });
  });
  app.delete('/__sandbox/rate-limit', (c) => {
    d.tenantLimit.set({});
    return c.json({});
  });
  app.get('/__sandbox/requests', (c) => c.json({ data: d.requests, total: d.requests.length, tokenRequests: d.tokenRequests }));
  app.delete('/__sandbox/requests', (c) => {
    d.requests.length = 0;
    d.tokenRequests.length = 0;
    return c.json({});
  });
  app.post('/__sandbox/expire-tokens', (c) => {
    d.oauth.expireAll();
    return c.json({});
  });
  app.post('/__sandbox/revoke-grants', (c) => {
    d.oauth.revokeAll();
    return c.json({});
  });
  app.post('/__sandbox/refresh-token', (c) => c.json({ refresh_token: d.oauth.issueRefreshToken() }, 201));
}

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { accessToken, api, start } from './helpers.js';

let sb: Sandbox;
let call: ReturnType<typeof api>;
beforeAll(async () => {
  sb = await start();
  call = api(sb, await accessToken(sb));
});
afterEach(() => sb.clearFaults());
afterAll(async () => {
  await sb.close();
});

describe('sandbox fault injection', () => {
  it('answers 429 with Retry-After for the matching requests only, and stops after `times`', async () => {
    sb.addFault({ match: { method: 'GET', pathIncludes: '/person/v4/people' }, status: 429, retryAfter: '2', times: 2 });
    const other = await call('GET', '/staffing/v7/workers?limit=1');
    expect(other.status).toBe(200);
    for (let i = 0; i < 2; i++) {
      const r = await call('GET', '/person/v4/people?limit=1');
      expect(r.status).toBe(429);
      expect(r.headers.get('retry-after')).toBe('2');
      expect(((await r.json()) as { error: string }).error).toBeTruthy();
    }
    expect((await call('GET', '/person/v4/people?limit=1')).status).toBe(200);
  });

  it('records requests before applying faults', async () => {
    sb.clearRequests();
    sb.addFault({ status: 503, times: 1 });
    const r = await call('POST', '/connect/v2/sendMessage', { recipients: [{ id: 'x' }] });
    expect(r.status).toBe(503);
    expect(sb.requests.map((x) => x.path)).toEqual(['/ccx/connect/v2/sendMessage']);
    expect((await call('POST', '/connect/v2/sendMessage', { recipients: [{ id: 'x' }] })).status).toBe(201);
  });

  it('adds latency', async () => {
    sb.addFault({ match: { pathIncludes: '/organizations' }, latencyMs: 300, times: 1 });
    const t = Date.now();
    const r = await call('GET', '/api/common/v1/organizations?limit=1');
    expect(r.status).toBe(200);
    expect(Date.now() - t).toBeGreaterThanOrEqual(280);
    // `times: 1`: the fault is used up, the next request is served as usual.
    expect(sb.state.faults.snapshot()).toEqual([]);
  });

  it('resets the connection', async () => {
    sb.addFault({ match: { pathIncludes: '/customers/' }, reset: true, times: 1 });
    const cust = sb.state.db.customers.all()[0]!;
    await expect(call('GET', `/api/common/v1/customers/${cust.id}`)).rejects.toThrow();
    const ok = await call('GET', `/api/common/v1/customers/${cust.id}`);
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { name: string }).name).toBe(cust.name);
  });

  it('is controllable over HTTP', async () => {
    const add = await fetch(`${sb.url}/__sandbox/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ match: { pathIncludes: '/invoices' }, status: 500 }),
    });
    expect(add.status).toBe(201);
    expect((await call('GET', '/customerAccounts/v1/invoices')).status).toBe(500);
    expect((await call('GET', '/customerAccounts/v1/invoices')).status).toBe(500);
    expect((await fetch(`${sb.url}/__sandbox/faults`, { method: 'DELETE' })).status).toBe(200);
    expect((await call('GET', '/customerAccounts/v1/invoices')).status).toBe(200);
  });

  it('applies to the token endpoint too', async () => {
    sb.addFault({ match: { pathIncludes: '/oauth2/' }, status: 503, times: 1 });
    await expect(accessToken(sb)).rejects.toThrow(/503/);
    await expect(accessToken(sb)).resolves.toMatch(/^sbx_at_/);
  });
});

/**
 * The sandbox's tenant rate limit (src/sandbox/tenant-limit.ts): API requests beyond N per second
 * or M in flight are answered 429 + Retry-After, the token endpoint is not limited, and what the
 * sandbox saw (peak per second, peak in flight, refusals) is counted for the tests that check a
 * client kept within the limit.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.js';
import { sandboxCommand } from '../../src/sandbox/cli.js';
import { accessToken, api, start } from './helpers.js';

let sb: Sandbox;
let call: ReturnType<typeof api>;

beforeAll(async () => {
  sb = await start();
  call = api(sb, await accessToken(sb));
});
afterAll(() => sb?.close());
beforeEach(() => sb.setTenantLimit({}));

const ORGS = '/api/common/v1/organizations?limit=1';

describe('sandbox tenant limit', () => {
  it('is off by default: a burst is served whole', async () => {
    const statuses = await Promise.all(Array.from({ length: 20 }, () => call('GET', ORGS).then((r) => r.status)));
    expect(statuses.every((s) => s === 200)).toBe(true);
  });

  it('answers 429 with Retry-After past N requests in a second, and counts them', async () => {
    sb.setTenantLimit({ requestsPerSecond: 5, retryAfter: 2 });
    const answers = await Promise.all(Array.from({ length: 12 }, () => call('GET', ORGS)));
    const refused = answers.filter((r) => r.status === 429);
    // A slow machine may spread the burst over more than a second: at least the excess beyond two windows.
    expect(refused.length).toBeGreaterThanOrEqual(2);
    expect(refused[0]!.headers.get('retry-after')).toBe('2');
    expect(await refused[0]!.json()).toEqual({ error: 'rate limit exceeded' });
    const stats = sb.tenantLimitStats();
    expect(stats.refused).toBe(refused.length);
    expect(stats.accepted).toBe(12 - refused.length);
    expect(stats.peakPerSecond).toBeGreaterThan(5);
  });

  it('answers 429 past M requests in flight, and counts the peak', async () => {
    sb.setTenantLimit({ maxConcurrent: 2, latencyMs: 300 });
    const statuses = await Promise.all(Array.from({ length: 5 }, () => call('GET', ORGS).then((r) => r.status)));
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(2);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(1);
    expect(sb.tenantLimitStats().peakConcurrent).toBe(2);
  });

  it('leaves the token endpoint alone', async () => {
    sb.setTenantLimit({ requestsPerSecond: 1 });
    const statuses = await Promise.all([1, 2, 3].map(() => call('GET', ORGS).then((r) => r.status)));
    expect(statuses).toContain(429);
    await expect(accessToken(sb)).resolves.toMatch(/^sbx_at_/);
  });

  it('is controllable over HTTP, refusing bad settings', async () => {
    const put = (body: unknown) =>
      fetch(`${sb.url}/__sandbox/rate-limit`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect((await put({ requestsPerSecond: 0 })).status).toBe(400);
    expect((await put({ maxConcurrent: 'many' })).status).toBe(400);
    expect((await put({ burst: 3 })).status).toBe(400);
    expect((await put([])).status).toBe(400);
    expect((await put({ requestsPerSecond: 1, retryAfter: 3 })).status).toBe(200);
    const answers = await Promise.all([1, 2, 3].map(() => call('GET', ORGS)));
    const refused = answers.filter((r) => r.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(refused[0]!.headers.get('retry-after')).toBe('3');
    const got = (await (await fetch(`${sb.url}/__sandbox/rate-limit`)).json()) as any;
    expect(got.settings).toEqual({ requestsPerSecond: 1, retryAfter: 3 });
    expect(got.stats).toMatchObject({ accepted: 3 - refused.length, refused: refused.length });
    expect((await fetch(`${sb.url}/__sandbox/rate-limit`, { method: 'DELETE' })).status).toBe(200);
    expect((await call('GET', ORGS)).status).toBe(200);
  });

  it('the sandbox command takes --rate-limit and --max-concurrent', async () => {
    const err: string[] = [];
    const write = process.stderr.write;
    process.stderr.write = ((s: string) => err.push(s) > 0) as typeof process.stderr.write;
    try {
      expect(await sandboxCommand(['--rate-limit', '0'])).toBe(2);
      expect(await sandboxCommand(['--max-concurrent', 'x'])).toBe(2);
    } finally {
      process.stderr.write = write;
    }
    expect(err.join('')).toMatch(/--rate-limit must be an integer between 1/);
  });
});

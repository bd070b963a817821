/**
 * The HCM service misbehaving (sandbox faults): 429, 5xx, slow answers and reset connections.
 * The execution fails with the status and the step named — or succeeds after the step's retries —
 * and nothing hangs: every sync answer comes back within a bound.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { startTestServer, type TestServer } from '../server/helpers.js';
import { sandboxEnv } from '../helpers/sandbox-env.js';

const dir = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'hcm');
let sb: Sandbox;
let s: TestServer;

beforeAll(async () => {
  sb = await startSandbox({ port: 0, quiet: true });
  s = await startTestServer({
    dir,
    env: sandboxEnv(sb, { refreshToken: sb.issueRefreshToken() }),
  });
  // Token obtained once, before any fault is injected (a busy machine may need a second try).
  let warm = await call();
  for (let i = 0; i < 3 && warm.status !== 200; i++) warm = await call();
  expect(warm.status, JSON.stringify(warm.body)).toBe(200);
});
afterEach(() => sb.clearFaults());
afterAll(async () => {
  await s?.stop();
  await sb?.close();
});

const WORKER = { pathIncludes: '/workers/' };

async function call(retry = false) {
  const t0 = performance.now();
  const res = await fetch(`${s.urls('worker').live}${retry ? '?retry=yes' : ''}`, { method: 'POST' });
  const body = (await res.json()) as any;
  return { status: res.status, body, ms: performance.now() - t0 };
}

async function failed(r: Awaited<ReturnType<typeof call>>, step: string) {
  expect(r.status).toBe(500);
  expect(r.body.error).toContain(`step ${step}`);
  const record = await s.waitForExecution(r.body.executionId);
  expect(record.status).toBe('failed');
  expect(record.error.step).toBe(step);
  return record;
}

describe('HCM faults', () => {
  it('429 without retry: fails with the status and the step named', async () => {
    sb.addFault({ match: WORKER, status: 429, retryAfter: '0', times: 1 });
    const r = await call();
    const record = await failed(r, 'plain');
    expect(record.error.status).toBe(429);
    expect(record.error.message).toMatch(/429|rate limit/i);
  });

  it('429 then OK with retry: succeeds on the second attempt', async () => {
    sb.addFault({ match: WORKER, status: 429, retryAfter: '0', times: 1 });
    const r = await call(true);
    expect(r.status).toBe(200);
    const record = await s.waitForExecution(r.body ? (await s.api('GET', '/executions?integration=worker&limit=1')).body[0].id : '');
    expect(record.status).toBe('succeeded');
    expect(record.steps.find((x: any) => x.id === 'retried').attempts).toBe(2);
  });

  it('persistent 503: the retries run out, the execution fails with 503 and the step named', async () => {
    sb.addFault({ match: WORKER, status: 503, times: 10 });
    const r = await call(true);
    const record = await failed(r, 'retried');
    expect(record.error.status).toBe(503);
    expect(record.steps.find((x: any) => x.id === 'retried').attempts).toBe(3);
  });

  it('500 from HCM: fails with 500 named', async () => {
    sb.addFault({ match: WORKER, status: 500, times: 1 });
    const record = await failed(await call(), 'plain');
    expect(record.error.status).toBe(500);
  });

  it('a slow answer: the step times out (timeoutMs 1500) instead of hanging', async () => {
    sb.addFault({ match: WORKER, latencyMs: 8000, times: 1 });
    const r = await call();
    const record = await failed(r, 'plain');
    expect(record.error.message).toMatch(/timed out after 1500 ms/);
  });

  it('a reset connection: fails with a network error named; retried steps recover', async () => {
    sb.addFault({ match: WORKER, reset: true, times: 1 });
    const r = await call();
    const record = await failed(r, 'plain');
    expect(record.error.message).toMatch(/reset|socket|network|fetch failed|closed|terminated/i);

    sb.addFault({ match: WORKER, reset: true, times: 1 });
    const again = await call(true);
    expect(again.status).toBe(200);
  });

  it('the server still serves after all of it', async () => {
    expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
    expect((await call()).status).toBe(200);
  });
});

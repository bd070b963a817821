/**
 * Fair backlog: one slow integration fills its share of the backlog and gets 429 with
 * Retry-After; every other integration keeps being accepted (and runs).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { slowUpstream, startTestServer, type SlowUpstream, type TestServer } from '../server/helpers.js';

let s: TestServer;
let upstream: SlowUpstream;
beforeAll(async () => {
  upstream = await slowUpstream(60_000);
  // Backlog 20 → each integration may hold 10 queued executions; one runs at a time per integration.
  s = await startTestServer({ slowUrl: upstream.url, allowPrivateNetwork: true, limits: { backlog: 20, perIntegration: 1 } });
});
afterAll(async () => {
  await s?.stop();
  await upstream?.close();
});

const post = (url: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(async (r) => ({
    status: r.status,
    retryAfter: r.headers.get('retry-after'),
    body: (await r.json()) as { executionId?: string; error?: string },
  }));

describe('one integration flooding the backlog', () => {
  it('gets 429 once past its share; the others are still accepted', async () => {
    const answers = [];
    for (let i = 0; i < 30; i++) answers.push(await post(s.urls('slow').live, { i }));
    const accepted = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status !== 200);
    // One running plus its share of 10 queued (give or take the one being picked up).
    expect(accepted.length).toBeGreaterThanOrEqual(10);
    expect(accepted.length).toBeLessThanOrEqual(12);
    for (const r of refused) {
      expect(r.status).toBe(429);
      expect(r.retryAfter).toMatch(/^\d+$/);
      expect(r.body.error).toMatch(/integration slow .*backlog limit is 10/);
    }

    // Another integration is accepted and runs to the end while slow is still refused.
    const other = await post(s.urls('echo').live, { hello: 'world' });
    expect(other.status).toBe(200);
    const record = await s.waitForExecution(other.body.executionId!);
    expect(record.status).toBe('succeeded');
    expect((await post(s.urls('slow').live, { again: true })).status).toBe(429);

    // The admin API's manual run follows the same rule.
    expect((await s.api('POST', '/integrations/slow/run', {})).status).toBe(429);
    expect((await s.api('POST', '/integrations/echo/run', {})).status).toBe(200);
  });
});

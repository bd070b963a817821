/**
 * Expression guardrails seen from the server: a sync webhook whose expression runs away (deep
 * recursion, a huge sequence, a long computation) answers 500 naming the step, and the server
 * keeps serving other requests while the expression runs and afterwards.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../server/helpers.js';

const dir = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'guard');
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ dir });
});
afterAll(async () => {
  await s?.stop();
});

async function runaway(kind: string) {
  const res = await fetch(`${s.urls('runaway').live}?kind=${kind}`, { method: 'POST' });
  const body = (await res.json()) as { error: string; executionId: string };
  return { status: res.status, body };
}

describe('runaway expressions in a sync webhook', () => {
  it.each([
    ['stack', 'recurse'],
    ['sequence', 'huge'],
    ['time', 'spin'],
  ])('%s: 500 within seconds, naming step %s', async (kind, step) => {
    const r = await runaway(kind);
    expect(r.status).toBe(500);
    expect(r.body.executionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.body.error).toContain(`step ${step}`);
    expect(r.body.error).toMatch(/guardrail|stack|sequence|timeout|exceeded/i);
    const record = await s.waitForExecution(r.body.executionId);
    expect(record.status).toBe('failed');
    expect(record.error.step).toBe(step);
  });

  it('other requests are answered while a runaway expression is evaluated, and afterwards', async () => {
    // /healthz is asked one request after another for as long as the runaway request is open.
    // A process whose event loop the expression held would answer none of them before the
    // runaway's own 500 (they would all wait behind it).
    let open = true;
    let answeredDuring = 0;
    const slow = runaway('time').finally(() => (open = false));
    const health = (async () => {
      while (open) {
        const res = await fetch(`${s.url}/healthz`);
        expect(res.status).toBe(200);
        await res.arrayBuffer();
        if (open) answeredDuring++;
      }
    })();
    const r = await slow;
    await health;
    expect(r.status).toBe(500);
    expect(r.body.error).toContain('step spin');
    expect(answeredDuring).toBeGreaterThan(10);
    const ok = await fetch(s.urls('ok').live, { method: 'POST' });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ fine: true });
  });
});

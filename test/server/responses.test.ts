/** Webhook response modes (docs/server.md "Response modes"): async default, async custom (static, per field, computed), sync. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { slowUpstream, startTestServer, type SlowUpstream, type TestServer } from './helpers.js';

let s: TestServer;
let upstream: SlowUpstream;
beforeAll(async () => {
  upstream = await slowUpstream(1500);
  s = await startTestServer({ slowUrl: upstream.url });
});
afterAll(async () => {
  await s?.stop();
  await upstream?.close();
});

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

describe('async (default)', () => {
  it('answers 200 {executionId} with x-execution-id once recorded; the execution then succeeds', async () => {
    const res = await post(s.urls('echo').live, { a: 1 });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    const body = (await res.json()) as { executionId: string };
    expect(Object.keys(body)).toEqual(['executionId']);
    expect(res.headers.get('x-execution-id')).toBe(body.executionId);
    // Durable before the answer: the record exists right away.
    const now = await s.api('GET', `/executions/${body.executionId}`);
    expect(now.status).toBe(200);
    expect(['queued', 'running', 'succeeded']).toContain(now.body.status);
    const record = await s.waitForExecution(body.executionId);
    expect(record).toMatchObject({ id: body.executionId, integration: 'echo', status: 'succeeded', test: false, attempt: 1 });
    expect(record.steps[0]).toMatchObject({ id: 'echo', status: 'succeeded' });
    expect(typeof record.startedAt).toBe('string');
    expect(typeof record.finishedAt).toBe('string');
  });
});

describe('async custom', () => {
  it('static statusCode, contentType, headers and body', async () => {
    const res = await post(s.urls('custom-static').live, {});
    expect(res.status).toBe(202);
    expect(res.headers.get('content-type')).toBe('text/plain');
    expect(res.headers.get('x-accepted')).toBe('yes');
    expect(await res.text()).toBe('accepted');
    const id = res.headers.get('x-execution-id')!;
    expect(id).toBeTruthy();
    expect((await s.waitForExecution(id)).status).toBe('succeeded');
  });

  it('per-field expressions over $trigger', async () => {
    const res = await post(`${s.urls('custom-fields').live}/p/q`, { code: 203, name: 'Ada' });
    expect(res.status).toBe(203);
    expect(res.headers.get('x-name')).toBe('Ada');
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(await res.json()).toEqual({ got: 'Ada', path: 'p/q' });
    expect(res.headers.get('x-execution-id')).toBeTruthy();
  });

  it('computed response: quantity > 0 → 201 {status}, else 400 {error}', async () => {
    const ok = await post(s.urls('computed').live, { quantity: 3 });
    expect(ok.status).toBe(201);
    expect(await ok.json()).toEqual({ status: 'accepted' });
    const okId = ok.headers.get('x-execution-id')!;
    expect((await s.waitForExecution(okId)).result).toBe(3);

    const bad = await post(s.urls('computed').live, { quantity: 0 });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: 'quantity must be positive' });
    // The execution is recorded either way (the response is the integration's answer, not a rejection).
    expect(bad.headers.get('x-execution-id')).toBeTruthy();
  });
});

describe('sync', () => {
  it("answers with the last step's results as JSON", async () => {
    const res = await post(s.urls('sync-last').live, { n: 21 });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ doubled: 42, method: 'POST' });
    const id = res.headers.get('x-execution-id')!;
    const record = await s.waitForExecution(id);
    expect(record.status).toBe('succeeded');
  });

  it('answers with what core.respond set', async () => {
    const res = await post(s.urls('sync-respond').live, { name: 'Grace' });
    expect(res.status).toBe(201);
    expect(res.headers.get('x-custom')).toBe('set-by-step');
    expect(await res.json()).toEqual({ name: 'Grace' });
  });

  it('a failed run → 500 {error, executionId}', async () => {
    const res = await post(s.urls('sync-fail').live, { what: 'this' });
    expect(res.status).toBe(500);
    const body = (await res.json()) as { error: string; executionId: string };
    expect(body.error).toContain('cannot handle this');
    expect(body.error).toContain('boom');
    const record = await s.waitForExecution(body.executionId);
    expect(record.status).toBe('failed');
  });

  it('past timeoutMs → 504 {error, executionId} while the run goes on to succeed', async () => {
    const res = await post(s.urls('sync-slow').live, {});
    expect(res.status).toBe(504);
    const body = (await res.json()) as { error: string; executionId: string };
    expect(body.error).toMatch(/did not finish/);
    const record = await s.waitForExecution(body.executionId);
    expect(record.status).toBe('succeeded');
    expect(record.result.status).toBe(200);
  });
});

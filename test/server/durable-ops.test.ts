/**
 * Cancel and retry from the failed step over HTTP with the real runner (docs/server.md "Cancel
 * and retry"): outcomes of cancel by status, a retry that reuses the recorded results of the steps
 * before the failed one (counted at a loopback upstream), bulk retry with its filter, and the new
 * statuses in lists and metrics.
 */
import { cpSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ADMIN, fixtures, poll, startTestServer, tempDir, type TestServer } from './helpers.js';

vi.setConfig({ testTimeout: 30_000 });

/** A loopback upstream: /one answers 200, /two fails its first request then answers 200, /fail always 500, /slow never answers. */
function upstream() {
  const hits: Record<string, number> = {};
  let slowClosed = 0;
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    hits[path] = (hits[path] ?? 0) + 1;
    req.resume();
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (path === '/one') json(200, { one: hits[path] });
    else if (path === '/two') json(hits[path] === 1 ? 500 : 200, { two: hits[path] });
    else if (path === '/fail') json(500, { error: 'always' });
    else if (path === '/slow') res.on('close', () => slowClosed++);
    else json(404, {});
  });
  return {
    hits,
    get slowClosed() {
      return slowClosed;
    },
    start: () => new Promise<string>((r) => server.listen(0, '127.0.0.1', () => r(`http://127.0.0.1:${(server.address() as AddressInfo).port}`))),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

let s: TestServer;
const up = upstream();
const dir = tempDir('hcm-durable-ops-');

beforeAll(async () => {
  const base = await up.start();
  cpSync(join(fixtures, 'durable-ops'), dir.path, { recursive: true });
  s = await startTestServer({
    dir: dir.path,
    slowUrl: `${base}/slow`,
    env: { ONE_URL: `${base}/one`, TWO_URL: `${base}/two`, FAIL_URL: `${base}/fail` },
  });
});
afterAll(async () => {
  await s?.stop();
  await up.close();
  dir.remove();
});

async function trigger(name: string): Promise<string> {
  const res = await fetch(s.urls(name).live, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  expect(res.status).toBe(200);
  return res.headers.get('x-execution-id')!;
}

describe('POST /api/executions/{id}/cancel', () => {
  it('a waiting execution is cancelled at once; again it is 409 (finished); an unknown id 404', async () => {
    const id = await trigger('waiter');
    const waiting = await s.waitForExecution(id, ['waiting']);
    expect(waiting.wakeAt).toBeDefined();
    const r = await s.api('POST', `/executions/${id}/cancel`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id, status: 'cancelled' });
    expect((await s.api('GET', `/executions/${id}`)).body.status).toBe('cancelled');

    const again = await s.api('POST', `/executions/${id}/cancel`);
    expect(again.status).toBe(409);
    expect(again.body.error).toContain('already finished (cancelled)');
    expect(again.body.error).toContain('waiter');

    const unknown = await s.api('POST', '/executions/no-such-execution/cancel');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toContain('no-such-execution');
  });

  it('a running execution gets cancelRequested and stops at its step boundary: its request aborted, the next step not run', async () => {
    const closedBefore = up.slowClosed;
    const id = await trigger('slow-step');
    await s.waitForExecution(id, ['running']);
    await poll(async () => ((up.hits['/slow'] ?? 0) > 0 ? true : undefined));
    const r = await s.api('POST', `/executions/${id}/cancel`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id, cancelRequested: true });
    // This process runs it: its request is aborted at once (not at the next once-a-second check
    // for cancels other replicas recorded).
    await poll(async () => (up.slowClosed > closedBefore ? true : undefined), 300, 5);
    const done = await s.waitForExecution(id, ['cancelled', 'failed', 'succeeded']);
    expect(done.status).toBe('cancelled');
    expect(done.steps.map((st: { id: string }) => st.id)).not.toContain('after');
  });

  it('live streams hear of an execution cancelled at once', async () => {
    const id = await trigger('waiter');
    await s.waitForExecution(id, ['waiting']);
    const controller = new AbortController();
    const res = await fetch(`${s.url}/api/events?integration=waiter`, { headers: { authorization: `Bearer ${ADMIN}` }, signal: controller.signal });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    // A stream that never says it ends the test (a failure, not a hang).
    const deadline = setTimeout(() => controller.abort(), 5000);
    const until = async (part: string) => {
      while (!text.includes(part)) {
        const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
        if (done) throw new Error(`the stream ended without ${part}; it said: ${text}`);
        text += value;
      }
    };
    try {
      await until('event: ready');
      expect((await s.api('POST', `/executions/${id}/cancel`)).status).toBe(200);
      await until(`"id":"${id}","integration":"waiter","status":"cancelled"`);
    } finally {
      clearTimeout(deadline);
      controller.abort();
    }
  });

  it('a finished execution → 409 naming its status', async () => {
    const id = await trigger('always-fails');
    await s.waitForExecution(id);
    const r = await s.api('POST', `/executions/${id}/cancel`);
    expect(r.status).toBe(409);
    expect(r.body.error).toMatch(/already finished \(failed\)/);
  });

  it('GET /api/executions?status= takes waiting and cancelled; rows carry wakeAt', async () => {
    const id = await trigger('waiter');
    await s.waitForExecution(id, ['waiting']);
    const waiting = await s.api('GET', '/executions?integration=waiter&status=waiting');
    expect(waiting.status).toBe(200);
    const row = waiting.body.find((e: { id: string }) => e.id === id);
    expect(row).toMatchObject({ status: 'waiting', wakeAt: expect.any(String) });
    const metrics = await (await fetch(`${s.url}/metrics`)).text();
    expect(metrics).toMatch(/hcm_runner_executions_waiting\{integration="waiter"\} [1-9]/);
    await s.api('POST', `/executions/${id}/cancel`);
    const cancelled = await s.api('GET', '/executions?integration=waiter&status=cancelled');
    expect(cancelled.body.map((e: { id: string }) => e.id)).toContain(id);
    expect((await s.api('GET', '/executions?status=bogus')).status).toBe(400);
  });
});

describe('POST /api/executions/{id}/retry', () => {
  it('runs again from the failed step as a new execution: step 1 not called again, its results reused', async () => {
    const id = await trigger('flaky');
    const failed = await s.waitForExecution(id);
    expect(failed.status).toBe('failed');
    expect(failed.error.message).toContain('second');
    expect(up.hits['/one']).toBe(1);
    expect(up.hits['/two']).toBe(1);

    const r = await s.api('POST', `/executions/${id}/retry`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ executionId: expect.any(String), version: { sha256: expect.stringMatching(/^[0-9a-f]{64}$/) } });
    expect(r.body.executionId).not.toBe(id);
    const retried = await s.waitForExecution(r.body.executionId);
    expect(retried).toMatchObject({ status: 'succeeded', retryOf: id, attempt: 1 });
    expect(up.hits['/one']).toBe(1); // not called again
    expect(up.hits['/two']).toBe(2);
    expect(retried.steps[0]).toEqual(failed.steps[0]);
    expect(retried.steps[1].results.body).toEqual({ two: 2 });
    expect(retried.trigger.executionId).toBe(retried.id);

    const list = await s.api('GET', '/executions?integration=flaky');
    expect(list.body.find((e: { id: string }) => e.id === retried.id).retryOf).toBe(id);

    // The original is still failed; a succeeded execution cannot be retried.
    const again = await s.api('POST', `/executions/${retried.id}/retry`);
    expect(again.status).toBe(409);
    expect(again.body.error).toContain('is succeeded');
    expect(again.body.error).toContain('/replay');
    expect((await s.api('POST', '/executions/nope/retry')).status).toBe(404);
  });

  it('a second retry of the same execution → 409 naming the first retry; {"again": true} retries it once more', async () => {
    const id = await trigger('always-fails');
    await s.waitForExecution(id);
    const hitsBefore = up.hits['/fail'];
    const first = await s.api('POST', `/executions/${id}/retry`);
    expect(first.status).toBe(200);
    const firstRetry = first.body.executionId as string;
    expect((await s.waitForExecution(firstRetry)).status).toBe('failed');
    expect(up.hits['/fail']).toBe(hitsBefore + 1);

    const refused = await s.api('POST', `/executions/${id}/retry`);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toBe(
      `execution ${id} was already retried as ${firstRetry} (status failed); retry ${firstRetry} instead, or send {"again": true} to retry ${id} once more`,
    );
    const sameWithEmptyBody = await s.api('POST', `/executions/${id}/retry`, { again: false });
    expect(sameWithEmptyBody.status).toBe(409);
    expect(up.hits['/fail']).toBe(hitsBefore + 1);
    expect((await s.api('POST', `/executions/${id}/retry`, { again: 'yes' })).status).toBe(400);
    expect((await s.api('POST', `/executions/${id}/retry`, { bogus: 1 })).status).toBe(400);

    const again = await s.api('POST', `/executions/${id}/retry`, { again: true });
    expect(again.status).toBe(200);
    expect(again.body.executionId).not.toBe(firstRetry);
    expect(await s.waitForExecution(again.body.executionId)).toMatchObject({ status: 'failed', retryOf: id });
    expect(up.hits['/fail']).toBe(hitsBefore + 2);
    // Now the newest retry is the one named.
    const refusedAgain = await s.api('POST', `/executions/${id}/retry`);
    expect(refusedAgain.body.error).toContain(`already retried as ${again.body.executionId}`);
  });

  it('two retries of the same execution sent at once: one runs, the other is refused', async () => {
    const id = await trigger('always-fails');
    await s.waitForExecution(id);
    const both = await Promise.all([s.api('POST', `/executions/${id}/retry`), s.api('POST', `/executions/${id}/retry`)]);
    expect(both.map((r) => r.status).sort()).toEqual([200, 409]);
  });

  it('a cancelled execution can be retried; a waiting one cannot', async () => {
    const id = await trigger('waiter');
    await s.waitForExecution(id, ['waiting']);
    const refused = await s.api('POST', `/executions/${id}/retry`);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toContain('is waiting');
    await s.api('POST', `/executions/${id}/cancel`);
    const r = await s.api('POST', `/executions/${id}/retry`);
    expect(r.status).toBe(200);
    // It resumes at the wait step: waiting again (a fresh hour), with its link to the original.
    const retried = await s.waitForExecution(r.body.executionId, ['waiting']);
    expect(retried.retryOf).toBe(id);
    await s.api('POST', `/executions/${retried.id}/cancel`);
  });

  it('an integration no longer loaded → 409 naming it', async () => {
    writeFileSync(
      join(dir.path, 'gone.yaml'),
      'name: gone\ntrigger:\n  type: webhook\nsteps:\n  - id: boom\n    action: core.http\n    inputs:\n      url: { env: FAIL_URL }\n      method: POST\n',
    );
    await s.api('POST', '/reload');
    const id = await trigger('gone');
    await s.waitForExecution(id);
    rmSync(join(dir.path, 'gone.yaml'));
    await s.api('POST', '/reload');
    const r = await s.api('POST', `/executions/${id}/retry`);
    expect(r.status).toBe(409);
    expect(r.body.error).toContain('integration "gone"');
    expect(r.body.error).toContain('no longer loaded');
    const bulk = await s.api('POST', '/executions/retry', { integration: 'gone' });
    expect(bulk.status).toBe(409);
    expect(bulk.body.error).toContain('"gone"');
  });
});

describe('retry and per-key concurrency', () => {
  const keyed = (key: string) =>
    `name: keyed-fails\nconcurrency: { key: "{% '${key}' %}" }\ntrigger:\n  type: webhook\nsteps:\n  - id: boom\n    action: core.http\n    inputs:\n      url: { env: FAIL_URL }\n      method: POST\n`;

  it('a retry keeps the concurrency key of the execution it retries; a replay takes the version loaded now', async () => {
    writeFileSync(join(dir.path, 'keyed-fails.yaml'), keyed('v1'));
    expect((await s.api('POST', '/reload')).status).toBe(200);
    const id = await trigger('keyed-fails');
    expect(await s.waitForExecution(id)).toMatchObject({ status: 'failed', concurrencyKey: 'v1' });
    // The file's key changes; the failed execution's work is still in the line it was in.
    writeFileSync(join(dir.path, 'keyed-fails.yaml'), keyed('v2'));
    await s.api('POST', '/reload');
    const retried = await s.api('POST', `/executions/${id}/retry`);
    expect(retried.status).toBe(200);
    expect(await s.waitForExecution(retried.body.executionId)).toMatchObject({ retryOf: id, concurrencyKey: 'v1' });
    const bulk = await s.api('POST', '/executions/retry', { integration: 'keyed-fails', since: new Date(Date.now() - 60_000).toISOString() });
    expect(bulk.status).toBe(200);
    for (const e of bulk.body.executionIds) expect((await s.waitForExecution(e)).concurrencyKey).toBe('v1');
    const replayed = await s.api('POST', `/executions/${id}/replay`);
    expect((await s.waitForExecution(replayed.body.executionId)).concurrencyKey).toBe('v2');
    rmSync(join(dir.path, 'keyed-fails.yaml'));
    await s.api('POST', '/reload');
  });
});

describe('POST /api/executions/retry (bulk)', () => {
  it('retries every failed execution matching the filter; since/until narrow it', async () => {
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await trigger('always-fails'));
    for (const id of ids) await s.waitForExecution(id);
    const all = (await s.api('GET', '/executions?integration=always-fails&status=failed')).body as Array<{ id: string; queuedAt: string }>;

    // until = the newest one's queue time: all but that one (and those before our three are older still).
    const newest = all[0]!;
    const narrowed = await s.api('POST', '/executions/retry', {
      integration: 'always-fails',
      since: all[all.length - 1]!.queuedAt,
      until: newest.queuedAt,
    });
    expect(narrowed.status).toBe(200);
    expect(narrowed.body.more).toBe(false);
    // Every one considered: retried, or listed when an earlier test retried it already.
    expect(narrowed.body.executionIds.length + (narrowed.body.alreadyRetried?.length ?? 0)).toBe(all.length - 1);

    const none = await s.api('POST', '/executions/retry', { integration: 'always-fails', since: new Date(Date.now() + 60_000).toISOString() });
    expect(none.body).toEqual({ executionIds: [], more: false });

    const r = await s.api('POST', '/executions/retry', { integration: 'always-fails', status: 'failed' });
    expect(r.status).toBe(200);
    expect(r.body.more).toBe(false);
    // Every failed one (the narrowed call's retries too, once they failed) got a new execution.
    const retried = await Promise.all(r.body.executionIds.map((id: string) => s.waitForExecution(id)));
    const originals = new Set(retried.map((e: { retryOf: string }) => e.retryOf));
    expect(originals.has(newest.id)).toBe(true);
    // Those the narrowed call retried are listed, not retried again.
    const already = new Map((r.body.alreadyRetried as Array<{ executionId: string; retriedAs: string }>).map((a) => [a.executionId, a.retriedAs]));
    for (const id of ids) expect(originals.has(id) || already.has(id), id).toBe(true);
    for (const id of narrowed.body.executionIds) expect([...already.values()]).toContain(id);
  });

  it('the same filter sent twice retries each match once: the second call lists them as alreadyRetried', async () => {
    const since = new Date().toISOString();
    const ids = [await trigger('always-fails'), await trigger('always-fails')];
    for (const id of ids) await s.waitForExecution(id);
    // Bounded above: the retries this test makes are queued later and stay out of the filter.
    const until = new Date(Date.now() + 1).toISOString();
    await new Promise((r) => setTimeout(r, 5));
    const filter = { integration: 'always-fails', since, until };
    const hitsBefore = up.hits['/fail'];

    const first = await s.api('POST', '/executions/retry', filter);
    expect(first.status).toBe(200);
    expect(first.body.executionIds).toHaveLength(2);
    expect(first.body.alreadyRetried).toBeUndefined();
    for (const id of first.body.executionIds) await s.waitForExecution(id);
    expect(up.hits['/fail']).toBe(hitsBefore + 2);

    const second = await s.api('POST', '/executions/retry', filter);
    expect(second.status).toBe(200);
    expect(second.body).toEqual({
      executionIds: [],
      more: false,
      alreadyRetried: [
        { executionId: ids[1], retriedAs: first.body.executionIds[0] },
        { executionId: ids[0], retriedAs: first.body.executionIds[1] },
      ],
    });
    await new Promise((r) => setTimeout(r, 200));
    expect(up.hits['/fail']).toBe(hitsBefore + 2);
  });

  it('a bad filter → 400 naming the field', async () => {
    const cases: Array<[unknown, string]> = [
      [{ status: 'succeeded' }, 'status'],
      [{ since: 'yesterday' }, 'since'],
      [{ until: 5 }, 'until'],
      [{ integration: '' }, 'integration'],
      [{ bogus: 1 }, 'bogus'],
      [[1], 'JSON object'],
      [{ since: '2026-01-02T00:00:00Z', until: '2026-01-01T00:00:00Z' }, 'since'],
    ];
    for (const [body, field] of cases) {
      const r = await s.api('POST', '/executions/retry', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error).toContain(field);
    }
  });
});

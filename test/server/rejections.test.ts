/**
 * Requests the runner refuses (docs/server.md, docs/promises.md): each gets a 4xx with a JSON `{error}` and creates
 * no execution.
 */
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIGNING_SECRET, slowUpstream, startTestServer, type SlowUpstream, type TestServer } from './helpers.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.stop();
});

async function count(integration: string): Promise<number> {
  const r = await s.api('GET', `/executions?integration=${integration}&limit=500`);
  expect(r.status).toBe(200);
  return r.body.length;
}

async function expectJsonError(res: Response, status: number): Promise<string> {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toContain('application/json');
  const body = (await res.json()) as { error: string };
  expect(typeof body.error).toBe('string');
  expect(res.headers.get('x-execution-id')).toBeNull();
  return body.error;
}

const sign = (body: string, secret = SIGNING_SECRET) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

describe('HMAC', () => {
  const body = JSON.stringify({ event: 'contact.changed', id: 7 });

  it('a correct signature over the raw bytes is accepted', async () => {
    const res = await fetch(s.urls('hmac').live, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-signature': sign(body) },
      body,
    });
    expect(res.status).toBe(200);
    const record = await s.waitForExecution(((await res.json()) as { executionId: string }).executionId);
    expect(record.result).toEqual({ event: 'contact.changed', id: 7 });
  });

  it('missing, wrong, or wrong-prefix signatures → 401 and no execution', async () => {
    const before = await count('hmac');
    const attempts: Array<Record<string, string>> = [
      {},
      { 'x-signature': sign(body, 'another-secret') },
      { 'x-signature': sign(`${body} `) },
      { 'x-signature': sign(body).slice('sha256='.length) },
      { 'x-signature': 'sha256=zz' },
    ];
    for (const h of attempts) {
      const res = await fetch(s.urls('hmac').live, { method: 'POST', headers: { 'content-type': 'application/json', ...h }, body });
      await expectJsonError(res, 401);
    }
    expect(await count('hmac')).toBe(before);
  });

  it('an empty signing secret refuses every request instead of accepting empty-key signatures', async () => {
    const empty = await startTestServer({ env: { TEST_SIGNING_SECRET: '' } });
    try {
      const body = '{"a":1}';
      const res = await fetch(empty.urls('hmac').live, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-signature': sign(body, '') },
        body,
      });
      expect(await expectJsonError(res, 500)).toMatch(/signing secret is not configured/);
      expect((await empty.api('GET', '/executions?integration=hmac')).body).toEqual([]);
    } finally {
      await empty.stop();
    }
  });
});

describe('bad input', () => {
  it('malformed JSON → 400, no execution', async () => {
    const before = await count('echo');
    const res = await fetch(s.urls('echo').live, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a": ' });
    expect(await expectJsonError(res, 400)).toMatch(/malformed JSON/);
    expect(await count('echo')).toBe(before);
  });

  it('malformed JSON in a JSON-typed multipart part → 400', async () => {
    const body = '--b\r\nContent-Disposition: form-data; name="meta"\r\nContent-Type: application/json\r\n\r\n{nope\r\n--b--\r\n';
    const res = await fetch(s.urls('echo').live, { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=b' }, body });
    await expectJsonError(res, 400);
  });

  it('unknown token → 404', async () => {
    const base = s.urls('echo').live.replace(/\/webhooks\/.*/, '');
    await expectJsonError(await fetch(`${base}/webhooks/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`, { method: 'POST' }), 404);
    await expectJsonError(await fetch(`${base}/webhooks/test/nope`, { method: 'POST' }), 404);
    await expectJsonError(await fetch(`${base}/webhooks/`, { method: 'POST' }), 404);
  });

  it('disabled integration: live URL 404, test URL runs with test: true', async () => {
    const urls = s.urls('disabled');
    const before = await count('disabled');
    await expectJsonError(await fetch(urls.live, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }), 404);
    expect(await count('disabled')).toBe(before);
    const res = await fetch(urls.test, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(200);
    const record = await s.waitForExecution(((await res.json()) as { executionId: string }).executionId);
    expect(record.test).toBe(true);
    expect(record.result).toBe(true); // $execution.test
  });

  it('wrong method → 405 with Allow, no execution', async () => {
    const before = await count('strict');
    const res = await fetch(s.urls('strict').live, { method: 'PUT', body: 'x' });
    await expectJsonError(res, 405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(await count('strict')).toBe(before);
  });

  it('body above maxBodyBytes → 413, no execution (declared length and streamed size)', async () => {
    const before = await count('strict');
    const big = JSON.stringify({ pad: 'x'.repeat(200) });
    await expectJsonError(await fetch(s.urls('strict').live, { method: 'POST', headers: { 'content-type': 'application/json' }, body: big }), 413);
    // Chunked (no Content-Length): the size is checked while streaming.
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(`{"pad":"${'y'.repeat(80)}`));
        controller.enqueue(new TextEncoder().encode(`${'y'.repeat(80)}"}`));
        controller.close();
      },
    });
    const res = await fetch(s.urls('strict').live, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    await expectJsonError(res, 413);
    expect(await count('strict')).toBe(before);
    // Within the limit it is accepted.
    expect((await fetch(s.urls('strict').live, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"ok":1}' })).status).toBe(
      200,
    );
  });
});

describe('backpressure', () => {
  let busy: TestServer;
  let upstream: SlowUpstream;
  beforeAll(async () => {
    upstream = await slowUpstream(2000);
    busy = await startTestServer({ slowUrl: upstream.url, limits: { concurrency: 1, perIntegration: 1, backlog: 1 } });
  });
  afterAll(async () => {
    await busy?.close(0);
    busy?.data.remove();
    await upstream?.close();
  });

  it('past the backlog limit → 429 with Retry-After and no execution', async () => {
    const url = busy.urls('slow').live;
    const first = await fetch(url, { method: 'POST' }); // taken by the only worker
    expect(first.status).toBe(200);
    const second = await fetch(url, { method: 'POST' }); // waits in the queue (backlog 1)
    expect(second.status).toBe(200);
    const third = await fetch(url, { method: 'POST' });
    expect(third.status).toBe(429);
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await third.json()) as { error: string }).error).toMatch(/backlog/);
    const list = await busy.api('GET', '/executions?integration=slow');
    expect(list.body.map((e: { id: string }) => e.id).sort()).toEqual(
      [first.headers.get('x-execution-id'), second.headers.get('x-execution-id')].sort(),
    );
  });
});

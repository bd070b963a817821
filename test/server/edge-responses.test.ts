/**
 * What integrations may put into webhook answers (docs/security.md "Webhook responses"): framing
 * and hop-by-hop headers are dropped (a lying content-length or a passed-through
 * transfer-encoding cannot desynchronise the caller's connection), no body goes with 204, 304 or
 * HEAD, headers that cannot be sent answer a clean 500 naming the execution — before a run is
 * recorded as answered — and every public answer carries the edge's CSP and nosniff.
 */
import { connect } from 'node:net';
import { join } from 'node:path';
import { pino } from 'pino';
import { Client } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtures, startTestServer, type TestServer } from './helpers.js';

const logs: Array<Record<string, unknown>> = [];
let s: TestServer;
beforeAll(async () => {
  const logger = pino({ level: 'warn' }, { write: (line: string) => void logs.push(JSON.parse(line)) });
  s = await startTestServer({ dir: join(fixtures, 'edge'), logger });
});
afterAll(async () => {
  await s?.stop();
});

const path = (name: string, which: 'live' | 'test' = 'live') => new URL(s.urls(name)[which]).pathname;

interface RawResponse {
  status: number;
  /** Header lines as sent, names lower-cased, repeated ones kept. */
  headers: Array<[string, string]>;
  body: string;
}

/**
 * Writes `requests` on one connection (pipelined, as a keep-alive client may) and reads the
 * answers back with HTTP/1.1 framing: Content-Length, or none for 204, 304 and HEAD. An answer
 * whose framing lies shows up as a wrong next answer.
 */
async function exchange(requests: Array<{ method: string; path: string; body?: string }>): Promise<RawResponse[]> {
  const socket = connect(s.port, '127.0.0.1');
  const text = requests
    .map((r, i) => {
      const last = i === requests.length - 1;
      const body = r.body ?? '';
      const head = [`${r.method} ${r.path} HTTP/1.1`, 'host: 127.0.0.1', `connection: ${last ? 'close' : 'keep-alive'}`];
      if (r.body !== undefined) head.push('content-type: application/json', `content-length: ${Buffer.byteLength(body)}`);
      return `${head.join('\r\n')}\r\n\r\n${body}`;
    })
    .join('');
  socket.write(text);
  const chunks: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    socket.on('data', (c) => chunks.push(c));
    socket.on('end', resolve);
    socket.on('error', reject);
    socket.setTimeout(10_000, () => reject(new Error('no answer within 10 s')));
  });
  socket.destroy();
  let rest = Buffer.concat(chunks);
  const out: RawResponse[] = [];
  for (const req of requests) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) throw new Error(`answer to ${req.method} ${req.path} missing; left: ${JSON.stringify(rest.toString())}`);
    const [statusLine, ...lines] = rest.subarray(0, end).toString('latin1').split('\r\n');
    const status = Number(statusLine!.split(' ')[1]);
    const headers = lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()] as [string, string]);
    const length = req.method === 'HEAD' || status === 204 || status === 304 ? 0 : Number(headers.find(([n]) => n === 'content-length')?.[1] ?? 0);
    out.push({ status, headers, body: rest.subarray(end + 4, end + 4 + length).toString() });
    rest = rest.subarray(end + 4 + length);
  }
  if (rest.length > 0) throw new Error(`bytes past the last answer: ${JSON.stringify(rest.toString())}`);
  return out;
}

const all = (r: RawResponse, name: string) => r.headers.filter(([n]) => n === name).map(([, v]) => v);

describe('framing headers set by integrations are dropped', () => {
  it('a content-length shorter than the body: the next request on the connection gets its own answer', async () => {
    const [lying, health] = await exchange([
      { method: 'POST', path: path('lying-length'), body: '{}' },
      { method: 'GET', path: '/healthz' },
    ]);
    expect(lying!.status).toBe(200);
    expect(lying!.body).toBe("<script>document.title='owned'</script>");
    expect(all(lying!, 'content-length')).toEqual([String(lying!.body.length)]);
    expect(health).toMatchObject({ status: 200, body: '{"status":"ok"}' });
  });

  it('the same through undici, pipelined on one keep-alive connection', async () => {
    const client = new Client(new URL(s.url).origin, { pipelining: 3 });
    try {
      const answers = await Promise.all([
        client.request({ method: 'POST', path: path('lying-length'), body: '{}', headers: { 'content-type': 'application/json' } }),
        client.request({ method: 'GET', path: '/healthz' }),
        client.request({ method: 'GET', path: path('lying-length') }),
      ]);
      const bodies = await Promise.all(answers.map((a) => a.body.text()));
      expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200]);
      expect(bodies).toEqual(["<script>document.title='owned'</script>", '{"status":"ok"}', "<script>document.title='owned'</script>"]);
    } finally {
      await client.close();
    }
  });

  it("an upstream's transfer-encoding, content-length, connection and proxy-* passed through: dropped, said once in the log", async () => {
    const [first, second] = await exchange([
      { method: 'POST', path: path('proxy-headers'), body: '{}' },
      { method: 'POST', path: path('proxy-headers'), body: '{}' },
    ]);
    for (const r of [first!, second!]) {
      expect(r.status).toBe(200);
      expect(JSON.parse(r.body)).toEqual({ relayed: true });
      expect(all(r, 'transfer-encoding')).toEqual([]);
      expect(all(r, 'content-length')).toEqual([String(Buffer.byteLength(r.body))]);
      expect(all(r, 'proxy-authenticate')).toEqual([]);
      expect(all(r, 'x-upstream')).toEqual(['kept']);
    }
    const said = logs.filter((l) => l.integration === 'proxy-headers' && String(l.msg).includes('dropped'));
    expect(said).toHaveLength(1);
    expect(said[0]!.headers).toEqual(['transfer-encoding', 'content-length', 'connection', 'keep-alive', 'proxy-authenticate']);
  });
});

describe('no body with 204, 304 or HEAD', () => {
  it('204 and 304 set with a body go out without it; the connection stays in step', async () => {
    const [noContent, notModified, health] = await exchange([
      { method: 'POST', path: path('no-content'), body: '{}' },
      { method: 'POST', path: `${path('no-content')}?status=304`, body: '{}' },
      { method: 'GET', path: '/healthz' },
    ]);
    expect(noContent).toMatchObject({ status: 204, body: '' });
    expect(all(noContent!, 'x-kept')).toEqual(['yes']);
    expect(all(noContent!, 'content-length').filter((v) => v !== '0')).toEqual([]);
    expect(notModified).toMatchObject({ status: 304, body: '' });
    expect(health).toMatchObject({ status: 200, body: '{"status":"ok"}' });
  });

  it('HEAD: the answer without its body', async () => {
    const [head, health] = await exchange([
      { method: 'HEAD', path: `${path('no-content')}?status=200` },
      { method: 'GET', path: '/healthz' },
    ]);
    expect(head).toMatchObject({ status: 200, body: '' });
    expect(all(head!, 'x-kept')).toEqual(['yes']);
    expect(health).toMatchObject({ status: 200, body: '{"status":"ok"}' });
  });
});

describe('headers that cannot be sent', () => {
  const post = (name: string, data: unknown) =>
    fetch(s.urls(name).live, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(data) });

  it('a computed value "ż" in core.respond: 500 naming the executionId; the run is recorded failed, not answered', async () => {
    const res = await post('computed-header', { headers: { 'x-name': 'żółw' } });
    expect(res.status).toBe(500);
    const body = (await res.json()) as { error: string; executionId: string };
    expect(body.executionId).toMatch(/\S/);
    expect(res.headers.get('x-execution-id')).toBe(body.executionId);
    expect(body.error).toContain('"x-name"');
    expect(body.error).toContain('U+017C');
    const record = await s.waitForExecution(body.executionId);
    expect(record.status).toBe('failed');
    expect(record.response).toBeUndefined();
    expect(record.steps[0]).toMatchObject({ id: 'reply', status: 'failed' });
  });

  it('a computed name with a space: the same clean 500', async () => {
    const res = await post('computed-header', { headers: { 'x bad': '1' } });
    expect(res.status).toBe(500);
    const body = (await res.json()) as { error: string; executionId: string };
    expect(body.error).toContain('header name "x bad" is not a valid header name: a space');
    expect((await s.waitForExecution(body.executionId)).status).toBe('failed');
  });

  it('a sendable computed header still goes out', async () => {
    const res = await post('computed-header', { headers: { 'x-name': 'turtle' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-name')).toBe('turtle');
  });

  it('an async custom response with a value "ż": 500 and nothing recorded, so a retry duplicates nothing', async () => {
    const count = async () => (await s.api('GET', '/executions?integration=computed-header-async&limit=500')).body.length as number;
    const before = await count();
    const res = await post('computed-header-async', { name: 'żółw' });
    expect(res.status).toBe(500);
    const body = (await res.json()) as { error: string };
    expect(body.error).toContain('integration computed-header-async');
    expect(body.error).toContain('nothing was recorded');
    expect(res.headers.get('x-execution-id')).toBeNull();
    expect(await count()).toBe(before);
    const ok = await post('computed-header-async', { name: 'turtle' });
    expect(ok.status).toBe(202);
    expect(ok.headers.get('x-name')).toBe('turtle');
    expect(await count()).toBe(before + 1);
  });
});

describe("the public edge's own headers", () => {
  const edge = (res: Response) => [res.headers.get('content-security-policy'), res.headers.get('x-content-type-options')];
  const expected = ["sandbox; default-src 'none'", 'nosniff'];

  it('on integration answers, rejections, /healthz and the OAuth callback', async () => {
    const text = await fetch(s.urls('echo-text').live, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'text/html', text: '<script>alert(1)</script>' }),
    });
    expect(text.headers.get('content-type')).toBe('text/html');
    expect(edge(text)).toEqual(expected);
    expect(edge(await fetch(`${s.url}/webhooks/no-such-token`, { method: 'POST' }))).toEqual(expected);
    expect(edge(await fetch(s.urls('echo-text').live, { method: 'PUT' }))).toEqual(expected);
    expect(edge(await fetch(`${s.url}/healthz`))).toEqual(expected);
    expect(edge(await fetch(`${s.url}/oauth/callback`))).toEqual(expected);
  });

  it('an integration cannot override them', async () => {
    const res = await fetch(s.urls('computed-header').live, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ headers: { 'content-security-policy': "script-src 'unsafe-inline'", 'x-content-type-options': 'sniff' } }),
    });
    expect(res.status).toBe(200);
    expect(edge(res)).toEqual(expected);
  });

  it('a binary body is an attachment', async () => {
    const form = new FormData();
    form.append('file', new Blob(['<script>alert(1)</script>'], { type: 'text/html' }), 'page.html');
    const res = await fetch(s.urls('echo-file').live, { method: 'POST', body: form });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toBe('attachment');
    expect(res.headers.get('content-type')).toBe('text/html');
    expect(await res.text()).toBe('<script>alert(1)</script>');
  });
});

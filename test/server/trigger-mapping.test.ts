/**
 * The `$trigger` mapping table of docs/authoring.md "webhook", end to end: real requests to the `echo`
 * integration (whose only step returns `$trigger`), read back through GET /api/executions/{id}.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.stop();
});

async function echo(init: Omit<RequestInit, 'body'> & { body?: BodyInit | Buffer; path?: string; test?: boolean } = {}): Promise<any> {
  const urls = s.urls('echo');
  if (Buffer.isBuffer(init.body)) init = { ...init, body: new Uint8Array(init.body) };
  const res = await fetch((init.test ? urls.test : urls.live) + (init.path ?? ''), { method: 'POST', ...(init as RequestInit) });
  expect(res.status).toBe(200);
  const { executionId } = (await res.json()) as { executionId: string };
  const record = await s.waitForExecution(executionId);
  expect(record.status).toBe('succeeded');
  expect(record.trigger).toEqual(record.result);
  return record.result;
}

function multipart(boundary: string, parts: Array<{ name: string; filename?: string; type?: string; data: string | Buffer }>): Buffer {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"${p.filename ? `; filename="${p.filename}"` : ''}\r\n`;
    if (p.type) head += `Content-Type: ${p.type}\r\n`;
    chunks.push(Buffer.from(`${head}\r\n`), Buffer.isBuffer(p.data) ? p.data : Buffer.from(p.data), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex');

describe('webhook $trigger mapping', () => {
  it('JSON body → body.data.<key> and body.contentType', async () => {
    const t = await echo({ headers: { 'content-type': 'application/json' }, body: JSON.stringify({ workerId: 'W-1', nested: { n: 2 } }) });
    expect(t.body).toEqual({ data: { workerId: 'W-1', nested: { n: 2 } }, contentType: 'application/json' });
    expect(t.rawBody).toBeUndefined();
  });

  it('+json body is JSON too', async () => {
    const t = await echo({ headers: { 'content-type': 'application/vnd.api+json; charset=utf-8' }, body: '{"type":"hire"}' });
    expect(t.body.data).toEqual({ type: 'hire' });
    expect(t.body.contentType).toBe('application/vnd.api+json; charset=utf-8');
  });

  it('XML (any other text) → rawBody.data as text and rawBody.contentType', async () => {
    const xml = '<?xml version="1.0"?><event><id>42</id><name>Zoë</name></event>';
    const t = await echo({ headers: { 'content-type': 'application/xml' }, body: xml });
    expect(t.rawBody).toEqual({ data: xml, contentType: 'application/xml' });
    expect(t.body).toBeUndefined();
  });

  it('plain text → rawBody', async () => {
    const t = await echo({ headers: { 'content-type': 'text/plain' }, body: 'hello there' });
    expect(t.rawBody).toEqual({ data: 'hello there', contentType: 'text/plain' });
  });

  it('binary image/png → body.data is the file {contentType, size, base64}, plus rawBody (base64)', async () => {
    const t = await echo({ headers: { 'content-type': 'image/png' }, body: new Uint8Array(PNG) });
    expect(t.body.data).toEqual({ contentType: 'image/png', size: PNG.length, base64: PNG.toString('base64') });
    expect(t.rawBody).toEqual({ data: PNG.toString('base64'), contentType: 'image/png' });
  });

  it('multipart/form-data: JSON-typed text part, plain text part and file part', async () => {
    const boundary = 'XyZ-boundary-123';
    const body = multipart(boundary, [
      { name: 'meta', type: 'application/json', data: '{"employee":"E-7","tags":["a","b"]}' },
      { name: 'note', data: 'just text' },
      { name: 'photo', filename: 'me.png', type: 'image/png', data: PNG },
    ]);
    const t = await echo({ headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body });
    expect(t.body.data.meta.data).toEqual({ employee: 'E-7', tags: ['a', 'b'] });
    expect(t.body.data.meta.data.employee).toBe('E-7');
    expect(t.body.data.note.data).toBe('just text');
    expect(t.body.data.photo).toEqual({ filename: 'me.png', contentType: 'image/png', size: PNG.length, base64: PNG.toString('base64') });
  });

  it('multipart built by FormData (undici) parses too', async () => {
    const form = new FormData();
    form.append('field', 'value');
    form.append('doc', new Blob([Buffer.from('%PDF-1.4 fake')], { type: 'application/pdf' }), 'doc.pdf');
    const t = await echo({ body: form });
    expect(t.body.data.field.data).toBe('value');
    expect(t.body.data.doc).toMatchObject({ filename: 'doc.pdf', contentType: 'application/pdf', size: 13 });
    expect(Buffer.from(t.body.data.doc.base64, 'base64').toString()).toBe('%PDF-1.4 fake');
  });

  it('application/x-www-form-urlencoded → body.data.<field>', async () => {
    const t = await echo({ headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'name=Ada+Lovelace&role=eng%26math&tag=a&tag=b' });
    expect(t.body.data).toEqual({ name: 'Ada Lovelace', role: 'eng&math', tag: ['a', 'b'] });
  });

  it('headers are lower-cased; Authorization is redacted', async () => {
    const t = await echo({
      headers: { 'X-Custom-Header': 'Value-1', 'content-type': 'application/json', Authorization: 'Bearer s3cr3t' },
      body: '{}',
    });
    expect(t.headers['x-custom-header']).toBe('Value-1');
    expect(t.headers['X-Custom-Header']).toBeUndefined();
    expect(t.headers.authorization).toBe('[redacted]');
    expect(JSON.stringify(t)).not.toContain('s3cr3t');
  });

  it('path after the token → pathFragment (no leading /), repeated query params → arrays', async () => {
    const t = await echo({ path: '/orders/123/items?x=1&x=2&single=yes&empty=', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(t.pathFragment).toBe('orders/123/items');
    expect(t.queryParameters).toEqual({ x: ['1', '2'], single: 'yes', empty: '' });
  });

  it('no fragment → empty pathFragment; method, webhookUrls, executionId and receivedAt', async () => {
    const urls = s.urls('echo');
    const res = await fetch(urls.live, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
    const { executionId } = (await res.json()) as { executionId: string };
    const record = await s.waitForExecution(executionId);
    const t = record.result;
    expect(t.pathFragment).toBe('');
    expect(t.method).toBe('PUT');
    expect(t.webhookUrls).toEqual(urls);
    expect(t.executionId).toBe(executionId);
    expect(new Date(t.receivedAt).toISOString()).toBe(t.receivedAt);
  });

  it('GET without a body: no body, query parameters only', async () => {
    const urls = s.urls('echo');
    const res = await fetch(`${urls.live}/ping?q=1`);
    expect(res.status).toBe(200);
    const record = await s.waitForExecution(((await res.json()) as { executionId: string }).executionId);
    expect(record.result.method).toBe('GET');
    expect(record.result.body).toBeUndefined();
    expect(record.result.queryParameters).toEqual({ q: '1' });
  });

  it('the test URL runs the same integration as a test execution', async () => {
    const urls = s.urls('echo');
    const res = await fetch(`${urls.test}/t`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"x":1}' });
    const record = await s.waitForExecution(((await res.json()) as { executionId: string }).executionId);
    expect(record.test).toBe(true);
    expect(record.result.pathFragment).toBe('t');
  });
});

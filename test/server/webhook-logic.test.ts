/** The webhook trigger's pure logic (no server): HMAC variants, multipart details, response rendering. */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { mapBody, parseMultipart, renderResponse, signHmac, verifyHmac, HttpError } from '../../src/triggers/webhook/index.js';

describe('verifyHmac', () => {
  const body = Buffer.from('{"a":1}');
  for (const algorithm of ['sha1', 'sha256', 'sha384', 'sha512'] as const) {
    for (const encoding of ['hex', 'base64'] as const) {
      it(`${algorithm}/${encoding}`, () => {
        const opts = { header: 'X-Sig', algorithm, encoding, prefix: '' };
        const sig = createHmac(algorithm, 'k').update(body).digest(encoding);
        expect(verifyHmac(opts, 'k', body, { 'x-sig': sig }).ok).toBe(true);
        expect(verifyHmac(opts, 'other', body, { 'x-sig': sig }).ok).toBe(false);
        expect(verifyHmac(opts, 'k', Buffer.from('{"a":2}'), { 'x-sig': sig }).ok).toBe(false);
        expect(verifyHmac(opts, 'k', body, {}).reason).toMatch(/missing/);
      });
    }
  }
  it('prefix is required when configured', () => {
    const opts = { header: 'x-hub-signature-256', algorithm: 'sha256' as const, encoding: 'hex' as const, prefix: 'sha256=' };
    const sig = signHmac(opts, 'k', body);
    expect(sig.startsWith('sha256=')).toBe(true);
    expect(verifyHmac(opts, 'k', body, { 'x-hub-signature-256': sig }).ok).toBe(true);
    expect(verifyHmac(opts, 'k', body, { 'x-hub-signature-256': sig.slice(7) }).ok).toBe(false);
  });
});

describe('multipart', () => {
  it('keeps text part content types, filename*, and repeated names', () => {
    const raw = Buffer.from(
      '--b\r\nContent-Disposition: form-data; name="a"\r\nContent-Type: application/json\r\n\r\n{"x":1}\r\n' +
        '--b\r\nContent-Disposition: form-data; name="f"; filename*=UTF-8\'\'r%C3%A9sum%C3%A9.txt\r\nContent-Type: text/plain\r\n\r\nhi\r\n' +
        '--b\r\nContent-Disposition: form-data; name="t"\r\n\r\none\r\n' +
        '--b\r\nContent-Disposition: form-data; name="t"\r\n\r\ntwo\r\n--b--\r\n',
    );
    const parts = parseMultipart(raw, 'b');
    expect(parts.map((p) => p.name)).toEqual(['a', 'f', 't', 't']);
    expect(parts[1]!.filename).toBe('résumé.txt');
    const mapped = mapBody(raw, 'multipart/form-data; boundary=b').body!.data as Record<string, any>;
    expect(mapped.a.data).toEqual({ x: 1 });
    expect(mapped.f).toMatchObject({ filename: 'résumé.txt', contentType: 'text/plain', size: 2 });
    expect(mapped.t.map((p: { data: string }) => p.data)).toEqual(['one', 'two']);
  });

  it('a body without its boundary is a 400', () => {
    expect(() => mapBody(Buffer.from('nothing here'), 'multipart/form-data; boundary=zzz')).toThrow(HttpError);
  });
});

describe('renderResponse', () => {
  it('strings as text, objects as JSON, binary values as bytes', () => {
    expect(renderResponse({ statusCode: 202, body: 'ok' })).toEqual({
      status: 202,
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      body: 'ok',
    });
    expect(renderResponse({ statusCode: 200, body: { a: 1 } }, { 'x-execution-id': 'e' })).toEqual({
      status: 200,
      headers: { 'content-type': 'application/json', 'x-execution-id': 'e' },
      body: '{"a":1}',
    });
    const bin = renderResponse({ statusCode: 200, body: { contentType: 'application/pdf', size: 3, base64: Buffer.from('pdf').toString('base64') } });
    expect(bin.headers['content-type']).toBe('application/pdf');
    expect(Buffer.isBuffer(bin.body) && bin.body.toString()).toBe('pdf');
  });
});

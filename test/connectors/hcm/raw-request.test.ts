/** Raw Request: confinement, bodies, headers, response types, retries, backoff, Retry-After, timeout. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { apiRequests, failure, harness, invoke, type Harness } from './helpers.js';

const SIR = '/accountsPayable/v1/supplierInvoiceRequests';

describe('hcm.rawRequest', () => {
  let h: Harness;
  const raw = (inputs: Record<string, unknown>) => invoke(h, 'rawRequest', inputs);
  beforeAll(async () => {
    h = await harness();
    await raw({ url: SIR, method: 'GET' });
  });
  afterAll(async () => {
    await h.close();
  });
  beforeEach(() => {
    h.sb.clearRequests();
    h.sb.clearFaults();
  });

  it.each([
    'http://evil.example/x',
    'HTTPS://evil.example',
    'javascript:alert(1)',
    '//evil.example/x',
    '/a/../../oauth2/x',
    '../x',
    '/a/%2e%2e/x',
    '/a/%2E%2E/%2e%2e/x',
    '/a/%252e%252e/x',
    '\\\\evil\\x',
    '/a\\..\\x',
    '/a/%5c..',
    '',
  ])('rejects %j before any request', async (url) => {
    const err = await failure(raw({ url, method: 'GET' }));
    expect(err.details.code).toBe('invalid_input');
    expect(err.message).toMatch(/^hcm\.rawRequest: /);
    expect(h.sb.requests).toHaveLength(0);
    expect(h.sb.tokenRequests).toHaveLength(0);
  });

  it('appends a path to the API URL with one slash, with query parameters as map or list', async () => {
    const res = (await raw({ url: `${SIR.slice(1)}?limit=2`, method: 'get', queryParameter: [{ key: 'offset', value: 1 }] })) as { data: unknown[] };
    expect(res.data).toHaveLength(2);
    const r = apiRequests(h)[0]!;
    expect(r.path).toBe(`/ccx${SIR}`);
    expect(r.query).toEqual({ limit: '2', offset: '1' });
  });

  it('sends JSON data; Authorization from the connection always wins over user headers', async () => {
    await raw({
      url: '/connect/v2/messageTemplates',
      method: 'POST',
      data: { name: 'raw' },
      header: { Authorization: 'Bearer user-supplied', 'X-Trace': 't1' },
    }).catch(() => undefined);
    const r = apiRequests(h)[0]!;
    expect(r.body).toEqual({ name: 'raw' });
    expect(r.contentType).toMatch(/^application\/json/);
    expect(r.headers['x-trace']).toBe('t1');
    expect(r.headers.authorization).not.toBe('Bearer user-supplied');
    expect(r.headers.authorization).toMatch(/^Bearer sbx_at_/);
  });

  it('sends form data and files as multipart (file names by key), overriding a user content-type', async () => {
    const container = (await invoke(h, 'createFileContainer', { tenant: 'acme' })) as { id: string };
    h.sb.clearRequests();
    await raw({
      url: `/api/prismAnalytics/v3/acme/fileContainers/${container.id}/files`,
      method: 'POST',
      header: [{ key: 'Content-Type', value: 'text/plain' }],
      formData: { note: 'hello' },
      fileData: { file: 'a,b\n' },
      fileDataFileNames: { file: 'data.csv' },
    });
    const r = apiRequests(h)[0]!;
    expect(r.contentType).toMatch(/^multipart\/form-data; boundary=/);
    expect(r.body).toMatchObject({ fields: { note: 'hello' }, files: [{ name: 'file', filename: 'data.csv' }] });
  });

  it('rejects data with form data, and file names without a file', async () => {
    expect(await failure(raw({ url: '/x', method: 'POST', data: { a: 1 }, formData: { b: '2' } }))).toHaveProperty('details.code', 'invalid_input');
    expect(await failure(raw({ url: '/x', method: 'POST', fileData: { f: 'x' }, fileDataFileNames: { g: 'g.txt' } }))).toHaveProperty(
      'details.code',
      'invalid_input',
    );
    expect(h.sb.requests).toHaveLength(0);
  });

  it('returns text and binary response types', async () => {
    const text = await raw({ url: SIR, method: 'GET', responseType: 'text', queryParameter: { limit: 1 } });
    expect(typeof text).toBe('string');
    expect(JSON.parse(text as string).data).toHaveLength(1);
    const bin = (await raw({ url: SIR, method: 'GET', responseType: 'binary', queryParameter: { limit: 1 } })) as {
      base64: string;
      contentType: string;
    };
    expect(bin.contentType).toBe('application/json');
    expect(JSON.parse(Buffer.from(bin.base64, 'base64').toString()).data).toHaveLength(1);
  });

  const count = () => apiRequests(h).length;

  it.each([
    ['no retry by default', 500, {}, 1],
    ['5xx retried maxRetryCount times', 503, { maxRetryCount: 2 }, 3],
    ['4xx not retried without retryOnAllErrors', 404, { maxRetryCount: 2 }, 1],
    ['4xx retried with retryOnAllErrors', 429, { maxRetryCount: 2, retryOnAllErrors: true }, 3],
    ['POST 5xx retried too', 502, { maxRetryCount: 1, method: 'POST', data: {} }, 2],
  ])('%s', async (_name, status, extra, expected) => {
    h.sb.addFault({ match: { pathIncludes: '/supplierInvoiceRequests' }, status });
    const err = await failure(raw({ url: SIR, method: 'GET', ...extra }));
    expect(err.details.status).toBe(status);
    expect(count()).toBe(expected);
  });

  it('recovers after transient errors and network resets', async () => {
    h.sb.addFault({ match: { pathIncludes: '/supplierInvoiceRequests' }, status: 500, times: 1 });
    h.sb.addFault({ match: { pathIncludes: '/supplierInvoiceRequests' }, reset: true, times: 1 });
    const res = (await raw({ url: SIR, method: 'GET', maxRetryCount: 3, retryDelayMs: 10 })) as { data: unknown[] };
    expect(res.data.length).toBeGreaterThan(0);
    expect(count()).toBe(3);
  });

  it('waits retryDelayMs between retries', async () => {
    h.sb.addFault({ match: { pathIncludes: '/supplierInvoiceRequests' }, status: 500 });
    const t = Date.now();
    await failure(raw({ url: SIR, method: 'GET', maxRetryCount: 2, retryDelayMs: 150 }));
    expect(Date.now() - t).toBeGreaterThanOrEqual(280);
    expect(count()).toBe(3);
  });

  it('exponential backoff uses jittered doubling delays (loose bounds) and ignores retryDelayMs', async () => {
    h.sb.addFault({ match: { pathIncludes: '/supplierInvoiceRequests' }, status: 500 });
    // With retryDelayMs honoured the two waits would take two minutes: the test's own timeout
    // fails it. The jittered delays themselves are checked below, without a clock.
    await failure(raw({ url: SIR, method: 'GET', maxRetryCount: 2, retryDelayMs: 60_000, useExponentialBackoff: true }));
    expect(count()).toBe(3);
  });

  it('honours Retry-After with exponential backoff', async () => {
    h.sb.addFault({ match: { pathIncludes: '/supplierInvoiceRequests' }, status: 429, retryAfter: '1', times: 1 });
    const t = Date.now();
    await raw({ url: SIR, method: 'GET', maxRetryCount: 1, retryOnAllErrors: true, useExponentialBackoff: true });
    expect(Date.now() - t).toBeGreaterThanOrEqual(950);
    expect(count()).toBe(2);
  });

  it('an abort (step timeout, shutdown) ends the wait between retries', async () => {
    h.sb.addFault({ match: { pathIncludes: '/supplierInvoiceRequests' }, status: 500 });
    const abort = new AbortController();
    const pending = failure(invoke(h, 'rawRequest', { url: SIR, method: 'GET', maxRetryCount: 2, retryDelayMs: 60_000 }, abort.signal));
    // After the first answer the call sleeps a minute (the test's own timeout fails it if the abort is ignored).
    await new Promise<void>((r) => {
      const t = setInterval(() => {
        if (count() === 1) {
          clearInterval(t);
          r();
        }
      }, 10);
    });
    abort.abort(new Error('step timed out'));
    expect((await pending).details).toMatchObject({ code: 'aborted', retryable: false });
    expect(count()).toBe(1);
  });

  it('applies the timeout per attempt', async () => {
    h.sb.addFault({ match: { pathIncludes: '/supplierInvoiceRequests' }, latencyMs: 1500, times: 1 });
    const res = (await raw({ url: SIR, method: 'GET', timeout: 200, maxRetryCount: 1 })) as { data: unknown[] };
    expect(res.data.length).toBeGreaterThan(0);
    // The slow first attempt was cut off by the timeout and retried (without the per-attempt
    // timeout the first attempt would have answered, after 1.5 s, and there would be one request).
    expect(count()).toBe(2);
    h.sb.addFault({ match: { pathIncludes: '/supplierInvoiceRequests' }, latencyMs: 800, times: 1 });
    const err = await failure(raw({ url: SIR, method: 'GET', timeout: 100 }));
    expect(err.details).toMatchObject({ code: 'timeout', retryable: true });
  });
});

describe('retryDelay', async () => {
  const { retryDelay } = await import('../../../src/connectors/http/retry.js');
  const res = (retryAfter?: string) => retryAfter;
  it('fixed delay without backoff, or a longer Retry-After; jittered doubling with a cap; Retry-After seconds or HTTP date, capped', () => {
    expect(retryDelay(3, { useExponentialBackoff: false, retryDelayMs: 250 })).toBe(250);
    expect(retryDelay(3, { useExponentialBackoff: false, retryDelayMs: 250 }, res('0'))).toBe(250);
    expect(retryDelay(3, { useExponentialBackoff: false, retryDelayMs: 250 }, res('9'))).toBe(9000);
    expect(retryDelay(3, { useExponentialBackoff: false, retryDelayMs: 250 }, res('86400'))).toBe(120_000);
    expect(retryDelay(0, { useExponentialBackoff: true, retryDelayMs: 0 }, res('86400'))).toBe(120_000);
    for (let n = 0; n < 20; n++) {
      const d = retryDelay(n, { useExponentialBackoff: true, retryDelayMs: 0 });
      expect(d).toBeGreaterThanOrEqual(0);
      expect(d).toBeLessThanOrEqual(Math.min(30_000, 500 * 2 ** n));
    }
    expect(retryDelay(0, { useExponentialBackoff: true, retryDelayMs: 0 }, res('2'))).toBe(2000);
    const date = new Date(Date.now() + 5000).toUTCString();
    const d = retryDelay(0, { useExponentialBackoff: true, retryDelayMs: 0 }, res(date));
    expect(d).toBeGreaterThan(3000);
    expect(d).toBeLessThanOrEqual(5000);
  });
});

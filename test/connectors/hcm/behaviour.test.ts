/** Defaults, paging, fetchAll, binary, multipart, key/value forms and error mapping. */
import { tokenStoreKey } from '../../../src/connectors/hcm/oauth/config.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ActionError } from '../../../src/common/errors.js';
import { fetchAllLimits } from '../../../src/connectors/hcm/index.js';
import { apiRequests, failure, harness, invoke, type Harness } from './helpers.js';

describe('HCM connector behaviour', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness();
  });
  afterAll(async () => {
    await h.close();
  });
  beforeEach(() => {
    h.sb.clearRequests();
    h.sb.clearFaults();
  });

  it('lists with defaults limit 20 / offset 0 and returns the parsed body', async () => {
    const res = (await invoke(h, 'listWorkers', {})) as { data: unknown[]; total: number };
    expect(res.data).toHaveLength(20);
    expect(res.total).toBe(300);
    expect(apiRequests(h)[0]!.query).toEqual({ limit: '20', offset: '0' });
  });

  it('fetchAll pages by 100 from offset 0 until a short page', async () => {
    const res = (await invoke(h, 'listWorkers', { fetchAll: true, limit: 5, offset: 40 })) as { data: Array<{ id: string }>; total: number };
    expect(res.data).toHaveLength(300);
    expect(new Set(res.data.map((w) => w.id)).size).toBe(300);
    expect(res.total).toBe(300);
    expect(apiRequests(h).map((r) => r.query)).toEqual([0, 100, 200, 300].map((o) => ({ limit: '100', offset: String(o) })));
  });

  it('fetchAll stops at the page cap, warns and marks the result truncated', async () => {
    const saved = fetchAllLimits.maxPages;
    fetchAllLimits.maxPages = 2;
    try {
      const res = (await invoke(h, 'listWorkers', { fetchAll: true })) as { data: unknown[]; truncated?: boolean };
      expect(res.data).toHaveLength(200);
      expect(res.truncated).toBe(true);
      expect(h.logs.some((l) => l.level === 'warn' && /truncated/.test(l.message))).toBe(true);
    } finally {
      fetchAllLimits.maxPages = saved;
    }
  });

  it('rejects a limit outside 1–100 before any request', async () => {
    for (const limit of [0, 101, 2.5]) {
      const err = await failure(invoke(h, 'listWorkers', { limit }));
      expect(err).toBeInstanceOf(ActionError);
      expect(err.details.code).toBe('invalid_input');
    }
    expect(await failure(invoke(h, 'listPeople', { offset: -1 }))).toHaveProperty('details.code', 'invalid_input');
    expect(apiRequests(h)).toHaveLength(0);
  });

  it('query params as a map and as a list of {key, value} (repeated keys kept)', async () => {
    await invoke(h, 'getTimeClockEvents', { queryParams: { worker: 'w1', toDate: '2024-01-01' } });
    await invoke(h, 'getTimeClockEvents', {
      queryParams: [
        { key: 'worker', value: 'w1' },
        { key: 'worker', value: 'w2' },
      ],
    });
    const [a, b] = apiRequests(h);
    expect(a!.query).toEqual({ worker: 'w1', toDate: '2024-01-01' });
    expect(b!.query).toEqual({ worker: ['w1', 'w2'] });
  });

  it('applies declaration defaults when the engine did not (create only) and omits empties', async () => {
    await invoke(h, 'createMessageTemplate', { messageTemplateName: 'n', referenceId: '', emailDetail: {} });
    await invoke(h, 'updateMessageTemplateById', { messageTemplateId: 'x', templateInactive: false }).catch(() => undefined);
    await invoke(h, 'createTable', {
      tenant: 'acme',
      name: 'N1',
      displayName: 'N1',
      fields: [{ name: 'ID', displayName: 'ID', ordinal: 1, type: { id: 'Schema_Field_Type=Text', name: 'Text' } }],
    });
    await invoke(h, 'createJobChange', { workerId: 'x', moveManagersTeam: true }).catch(() => undefined);
    const [c, u, t, j] = apiRequests(h);
    expect(c!.body).toEqual({ name: 'n', inactive: true });
    expect(u!.body).toEqual({ inactive: false });
    expect(t!.body).toMatchObject({ enableForAnalysis: false });
    expect(j!.body).toEqual({ moveManagersTeam: true });
  });

  it('returns a PDF as a binary value', async () => {
    const list = (await invoke(h, 'listInvoices', {})) as { data: Array<{ id: string }> };
    const pdf = (await invoke(h, 'getInvoicePdf', { invoicePdfId: list.data[0]!.id })) as { contentType: string; size: number; base64: string };
    expect(pdf.contentType).toBe('application/pdf');
    expect(pdf.size).toBeGreaterThan(100);
    expect(Buffer.from(pdf.base64, 'base64').subarray(0, 5).toString()).toBe('%PDF-');
  });

  it('uploads a file as multipart with one part named file (binary value or string)', async () => {
    const container = (await invoke(h, 'createFileContainer', { tenant: 'acme' })) as { id: string };
    expect(container.id).toBeTruthy();
    const bytes = Buffer.from('id,name\n1,Ada\n');
    await invoke(h, 'uploadFilesByContainerId', {
      tenant: 'acme',
      fileContainerId: container.id,
      file: { contentType: 'text/csv', size: bytes.length, base64: bytes.toString('base64'), filename: 'people.csv' },
    });
    await invoke(h, 'uploadFilesByContainerId', { tenant: 'acme', fileContainerId: container.id, file: 'plain text' });
    const ups = apiRequests(h).filter((r) => r.path.endsWith('/files') && r.method === 'POST');
    expect(ups).toHaveLength(2);
    expect(ups[0]!.contentType).toMatch(/^multipart\/form-data; boundary=/);
    const body = ups[0]!.body as { files: Array<{ name: string; filename: string; contentType: string; base64: string }> };
    expect(body.files).toHaveLength(1);
    expect(body.files[0]).toMatchObject({ name: 'file', filename: 'people.csv', contentType: 'text/csv', base64: bytes.toString('base64') });
    expect((ups[1]!.body as typeof body).files[0]!.base64).toBe(Buffer.from('plain text').toString('base64'));
    const files = (await invoke(h, 'getFilesByContainerId', { tenant: 'acme', fileContainerId: container.id })) as { data: unknown[] };
    expect(files.data).toHaveLength(2);
  });

  it.each([
    [400, 'bad_request', false],
    [403, 'forbidden', false],
    [404, 'not_found', false],
    [429, 'rate_limited', true],
    [500, 'server_error', true],
    [503, 'server_error', true],
  ])('maps HTTP %i to %s', async (status, code, retryable) => {
    h.sb.addFault({ match: { pathIncludes: '/timeTracking/v5/workers' }, status, times: 1 });
    const err = await failure(invoke(h, 'getWorkerById', { workerId: '21001' }));
    expect(err).toBeInstanceOf(ActionError);
    expect(err.message).toMatch(new RegExp(`^hcm\\.getWorkerById: HCM answered ${status} `));
    expect(err.details).toMatchObject({ status, code, retryable });
    expect(err.details.remote).toMatchObject({ error: expect.any(String) });
  });

  it('names the action and the remote error on a real 404', async () => {
    const err = await failure(invoke(h, 'getWorkerById', { workerId: 'nope' }));
    expect(err.message).toMatch(/^hcm\.getWorkerById: HCM answered 404 Not Found: /);
    expect(err.details.code).toBe('not_found');
  });

  it('a persistent 401 becomes unauthorized after one refresh + retry, without tokens in the message', async () => {
    h.sb.addFault({ match: { pathIncludes: '/person/v4/people' }, status: 401, times: 2 });
    const before = h.sb.tokenRequests.length;
    const err = await failure(invoke(h, 'listPeople', {}));
    expect(err.details).toMatchObject({ status: 401, code: 'unauthorized' });
    expect(apiRequests(h)).toHaveLength(2);
    expect(h.sb.tokenRequests.length - before).toBe(1);
    const stored = await h.tokens.get(tokenStoreKey(h.connection));
    expect(err.message).not.toContain(stored!.accessToken!);
    expect(err.message).not.toContain(stored!.refreshToken!);
    expect(JSON.stringify(err.details)).not.toContain(stored!.accessToken!);
  });

  it('maps a connection reset to a retryable network_error', async () => {
    h.sb.addFault({ match: { pathIncludes: '/person/v4/people' }, reset: true, times: 1 });
    const err = await failure(invoke(h, 'listPeople', {}));
    expect(err.details).toMatchObject({ code: 'network_error', retryable: true });
  });
});

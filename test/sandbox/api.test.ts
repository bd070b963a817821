import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandboxApp, type Sandbox } from '../../src/sandbox/index.js';
import { accessToken, api, start } from './helpers.js';

let sb: Sandbox;
let call: ReturnType<typeof api>;
beforeAll(async () => {
  sb = await start();
  call = api(sb, await accessToken(sb));
});
afterAll(async () => {
  await sb.close();
});

type Page = { data: Array<Record<string, any>>; total: number };
const body = async <T = any>(r: Response): Promise<T> => (await r.json()) as T;

describe('sandbox API: collections', () => {
  it('returns the {data,total} envelope with default limit 20 and honours offset', async () => {
    const p1 = await body<Page>(await call('GET', '/staffing/v7/workers'));
    expect(p1.total).toBe(300);
    expect(p1.data).toHaveLength(20);
    const p2 = await body<Page>(await call('GET', '/staffing/v7/workers?limit=5&offset=20'));
    expect(p2.data).toHaveLength(5);
    expect(p2.data[0]!.id).toBe((await body<Page>(await call('GET', '/staffing/v7/workers?limit=100'))).data[20]!.id);
    const tail = await body<Page>(await call('GET', '/staffing/v7/workers?limit=100&offset=290'));
    expect(tail.data).toHaveLength(10);
  });

  it('rejects limit > 100 and negative offsets with 400', async () => {
    const r = await call('GET', '/staffing/v7/workers?limit=101');
    expect(r.status).toBe(400);
    const e = await body(r);
    expect(e.error).toMatch(/limit/);
    expect(e.errors[0]).toMatchObject({ field: 'limit' });
    expect((await call('GET', '/person/v4/people?offset=-1')).status).toBe(400);
    expect((await call('GET', '/staffing/v7/workers?limit=100')).status).toBe(200);
  });

  it('serves staffing and time tracking views of the same workers, including Employee_ID= ids', async () => {
    const w = await body(await call('GET', '/staffing/v7/workers/Employee_ID=21001'));
    expect(w).toMatchObject({
      workerId: '21001',
      workerType: { descriptor: expect.any(String) },
      primaryJob: { supervisoryOrganization: { id: expect.any(String) } },
    });
    expect(w.id).toMatch(/^[0-9a-f]{32}$/);
    const tt = await body(await call('GET', `/timeTracking/v5/workers/${w.id}`));
    expect(tt).toMatchObject({ id: w.id, descriptor: w.descriptor });
    const person = await body(await call('GET', `/person/v4/people/${w.person.id}`));
    expect(person.legalName.fullName).toBe(w.descriptor);
    const byUid = await body<Page>(await call('GET', `/person/v4/people?universal_ID=${person.universal_ID.id}`));
    expect(byUid.total).toBe(1);
    expect(byUid.data[0]!.id).toBe(person.id);
    expect((await call('GET', '/staffing/v7/workers/doesnotexist')).status).toBe(404);
  });

  it('filters time clock events by worker and date range', async () => {
    const all = await body<Page>(await call('GET', '/timeTracking/v5/timeClockEvents?limit=100'));
    expect(all.total).toBe(500);
    const wid = all.data[0]!.worker.id as string;
    const mine = await body<Page>(await call('GET', `/timeTracking/v5/timeClockEvents?limit=100&worker=${wid}`));
    expect(mine.total).toBeGreaterThan(0);
    expect(mine.total).toBeLessThan(500);
    expect(mine.data.every((e) => e.worker.id === wid)).toBe(true);
    const ranged = await body<Page>(await call('GET', '/timeTracking/v5/timeClockEvents?limit=100&fromDate=2024-05-15&toDate=2024-05-20'));
    expect(ranged.total).toBeGreaterThan(0);
    expect(ranged.data.every((e) => e.dateTime >= '2024-05-15' && e.dateTime.slice(0, 10) <= '2024-05-20')).toBe(true);
    // ids with `$` resolve
    const dollar = await body<Page>(await call('GET', '/timeTracking/v5/timeClockEvents?limit=1&offset=0'));
    expect(dollar.data[0]!.id).toContain('$');
    expect((await call('GET', `/timeTracking/v5/timeClockEvents/${dollar.data[0]!.id}`)).status).toBe(200);
  });

  it('answers List Events blank unless exactly one worker is given', async () => {
    expect(await body(await call('GET', '/businessProcess/v1/events'))).toEqual({ data: [], total: 0 });
    const some = (await body<Page>(await call('GET', '/staffing/v7/workers?limit=100'))).data.map((w) => w.id);
    let found: Page | undefined;
    for (const id of some) {
      const p = await body<Page>(await call('GET', `/businessProcess/v1/events?worker=${id}`));
      if (p.total > 0) {
        found = p;
        expect(p.data.every((e) => e.for.id === id)).toBe(true);
        break;
      }
    }
    expect(found).toBeDefined();
    const two = await body(await call('GET', `/businessProcess/v1/events?worker=${some[0]}&worker=${some[1]}`));
    expect(two).toEqual({ data: [], total: 0 });
  });

  it('filters message templates by inactive and name', async () => {
    const inactive = await body<Page>(await call('GET', '/connect/v2/messageTemplates?inactive=true'));
    expect(inactive.total).toBeGreaterThan(0);
    expect(inactive.data.every((t) => t.inactive === true)).toBe(true);
    const all = await body<Page>(await call('GET', '/connect/v2/messageTemplates?limit=100'));
    expect(inactive.total).toBeLessThan(all.total);
    const name = all.data[0]!.name as string;
    const byName = await body<Page>(await call('GET', `/connect/v2/messageTemplates?name=${encodeURIComponent(name)}`));
    expect(byName.data.map((t) => t.name)).toContain(name);
  });

  it('serves the staffing value lookups', async () => {
    const reasons = await body<Page>(await call('GET', '/staffing/v7/values/jobChangesGroup/reason'));
    expect(reasons.total).toBeGreaterThan(0);
    expect(reasons.data[0]).toMatchObject({ id: expect.any(String), descriptor: expect.any(String), href: expect.stringContaining(sb.apiUrl) });
    const jobs = await body<Page>(await call('GET', '/staffing/v7/values/organizationAssignmentChangesGroup/jobs?worker=Employee_ID=21001'));
    expect(jobs.total).toBe(1);
  });

  it('is deterministic for a seed', () => {
    const a = createSandboxApp({ seed: 7, quiet: true })
      .state.db.workers.all()
      .map((w) => w.id);
    const b = createSandboxApp({ seed: 7, quiet: true })
      .state.db.workers.all()
      .map((w) => w.id);
    const c = createSandboxApp({ seed: 8, quiet: true })
      .state.db.workers.all()
      .map((w) => w.id);
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
  });
});

describe('sandbox API: writes', () => {
  it('runs create → get → update → delete on a message template', async () => {
    const created = await call('POST', '/connect/v2/messageTemplates', { name: 'Sandbox Test', emailDetail: { subject: 'Hi' } });
    expect(created.status).toBe(201);
    const t = await body(created);
    expect(t).toMatchObject({ name: 'Sandbox Test', inactive: true, id: expect.stringMatching(/^[0-9a-f]{32}$/) });
    expect(await body(await call('GET', `/connect/v2/messageTemplates/${t.id}`))).toMatchObject({ name: 'Sandbox Test' });
    const upd = await call('PUT', `/connect/v2/messageTemplates/${t.id}`, { name: 'Renamed', inactive: false });
    expect(upd.status).toBe(200);
    expect(await body(await call('GET', `/connect/v2/messageTemplates/${t.id}`))).toMatchObject({ id: t.id, name: 'Renamed', inactive: false });
    expect((await call('POST', '/connect/v2/messageTemplates', { emailDetail: {} })).status).toBe(400);
  });

  it('updates (PUT) and deletes a time clock event', async () => {
    const ev = (await body<Page>(await call('GET', '/timeTracking/v5/timeClockEvents?limit=1&offset=3'))).data[0]!;
    const put = await call('PUT', `/timeTracking/v5/timeClockEvents/${ev.id}`, {
      dateTime: '2024-07-01T09:00:00.000Z',
      comment: 'moved',
      reference_ID: 'R-1',
    });
    expect(put.status).toBe(200);
    expect(await body(await call('GET', `/timeTracking/v5/timeClockEvents/${ev.id}`))).toMatchObject({
      dateTime: '2024-07-01T09:00:00.000Z',
      comment: 'moved',
      reference_ID: 'R-1',
    });
    const del = await call('DELETE', `/timeTracking/v5/timeClockEvents/${ev.id}`);
    expect(del.status).toBe(200);
    expect(await body(del)).toEqual({});
    const gone = await call('GET', `/timeTracking/v5/timeClockEvents/${ev.id}`);
    expect(gone.status).toBe(404);
    expect((await body(gone)).error).toEqual(expect.any(String));
  });

  it('creates, patches and deletes a worker time block', async () => {
    const B = '/timeTracking/v5/workers/Employee_ID=21002/workerTimeBlock';
    const c = await call('POST', B, { doNotBill: false, comment: 'x' });
    expect(c.status).toBe(201);
    const tb = await body(c);
    const p = await call('PATCH', `${B}/${tb.id}`, { comment: 'y' });
    expect(await body(p)).toMatchObject({ id: tb.id, comment: 'y', doNotBill: false });
    expect((await call('DELETE', `${B}/${tb.id}`)).status).toBe(200);
    expect((await call('DELETE', `${B}/${tb.id}`)).status).toBe(404);
  });

  it('validates initiateJobChange and submits it', async () => {
    const bad = await call('POST', '/staffing/v7/workers/Employee_ID=21001/jobChanges', { date: '2024-06-01T00:00:00.000Z' });
    expect(bad.status).toBe(400);
    expect((await body(bad)).errors[0]).toMatchObject({ field: 'worker', code: expect.any(String), error: expect.any(String) });
    const w = await body(await call('GET', '/staffing/v7/workers/Employee_ID=21003'));
    const ok = await call('POST', '/staffing/v7/workers/Employee_ID=21001/jobChanges', {
      date: '2024-06-01T00:00:00.000Z',
      worker: { id: w.id },
      job: { id: w.primaryJob.id },
    });
    expect(ok.status).toBe(201);
    const jc = await body(ok);
    expect(jc.id).toBeTruthy();
    const sub = await call('POST', `/staffing/v7/jobChanges/${jc.id}/submit`, {});
    expect(sub.status).toBe(201);
    expect((await body(sub)).status.id).toBe('Submitted');
    expect((await call('POST', '/staffing/v7/organizationAssignmentChanges/nope/submit', {})).status).toBe(404);
  });

  it('requires days for a time off request and records the details', async () => {
    const w = (await body<Page>(await call('GET', '/staffing/v7/workers?limit=1&offset=250'))).data[0]!;
    const W = `/absenceManagement/v5/workers/${w.id}`;
    expect((await call('POST', `${W}/requestTimeOff`, { businessProcessParameters: {} })).status).toBe(400);
    const r = await call('POST', `${W}/requestTimeOff`, { days: [{ date: '2025-01-10T00:00:00.000Z', dailyQuantity: 4 }] });
    expect(r.status).toBe(201);
    const d = await body<Page>(await call('GET', `${W}/timeOffDetails?fromDate=2025-01-01`));
    expect(d.data.map((x) => x.date)).toEqual(['2025-01-10']);
  });

  it('checks supplier invoice control totals', async () => {
    const lines = [{ quantity: '2', unitCost: '10.00', extendedAmount: '20.00' }];
    const bad = await call('POST', '/accountsPayable/v1/supplierInvoiceRequests', { controlTotalAmount: '25.00', lines });
    expect(bad.status).toBe(400);
    const ok = await call('POST', '/accountsPayable/v1/supplierInvoiceRequests', { controlTotalAmount: '20.00', taxAmount: '0', lines, memo: 'm' });
    expect(ok.status).toBe(201);
    const sir = await body(ok);
    const att = await call('POST', `/accountsPayable/v1/supplierInvoiceRequests/${sir.id}/attachments`, {
      fileName: 'a.pdf',
      fileLength: '12',
      contentType: { id: 'application/pdf' },
    });
    expect(att.status).toBe(201);
    expect((await body<Page>(await call('GET', `/accountsPayable/v1/supplierInvoiceRequests/${sir.id}/attachments`))).total).toBe(1);
    expect((await call('POST', `/accountsPayable/v1/supplierInvoiceRequests/${sir.id}/submit`, {})).status).toBe(201);
  });

  it('uploads a file into a container (multipart) and lists it with its md5', async () => {
    const P = '/api/prismAnalytics/v3/acme/fileContainers';
    const c = await call('POST', P);
    expect(c.status).toBe(201);
    const { id } = await body(c);
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    const bytes = Buffer.from('id,name\n1,Ada\n2,Linus\n');
    const form = new FormData();
    form.append('file', new Blob([bytes], { type: 'text/csv' }), 'people.csv');
    const up = await call('POST', `${P}/${id}/files`, undefined, { body: form });
    expect(up.status).toBe(201);
    const files = await body<Page>(await call('GET', `${P}/${id}/files`));
    expect(files.total).toBe(1);
    expect(files.data[0]).toMatchObject({
      name: 'people.csv',
      checksum: createHash('md5').update(bytes).digest('hex'),
      length: String(bytes.length),
      state: { id: 'Success' },
    });
    const rec = sb.requests.find((r) => r.method === 'POST' && r.path === `/ccx${P}/${id}/files`)!;
    expect(rec.contentType).toMatch(/^multipart\/form-data; boundary=/);
    expect((rec.body as any).files[0]).toMatchObject({ name: 'file', filename: 'people.csv', size: bytes.length, base64: bytes.toString('base64') });
    const noFile = await call('POST', `${P}/${id}/files`, { hello: 1 });
    expect(noFile.status).toBe(400);
  });

  it('serves an invoice PDF as binary', async () => {
    const inv = (await body<Page>(await call('GET', '/customerAccounts/v1/invoices?limit=1'))).data[0]!;
    const r = await call('GET', `/customerAccounts/v1/invoicePDFs/${inv.id}`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/pdf');
    const buf = Buffer.from(await r.arrayBuffer());
    expect(buf.subarray(0, 8).toString('latin1')).toBe('%PDF-1.4');
    expect(buf.toString('latin1')).toContain(inv.invoiceNumber);
    expect((await call('GET', '/customerAccounts/v1/invoicePDFs/missing')).status).toBe(404);
  });

  it('creates and updates an analytics table', async () => {
    const T = '/api/prismAnalytics/v3/acme/tables';
    const c = await call('POST', T, {
      name: 'Sandbox_Test',
      fields: [{ name: 'ID', displayName: 'ID', ordinal: 1, type: { id: 'Schema_Field_Type=Text', name: 'Text' } }],
    });
    expect(c.status).toBe(201);
    const t = await body(c);
    expect(t.enableForAnalysis).toBe(false);
    await call('PUT', `${T}/${t.id}`, { displayName: 'Sandbox Test', enableForAnalysis: true });
    expect(await body(await call('GET', `${T}/${t.id}?type=full`))).toMatchObject({
      displayName: 'Sandbox Test',
      enableForAnalysis: true,
      fields: [{ name: 'ID' }],
    });
    expect((await body(await call('GET', `${T}/${t.id}`))).fields).toBeUndefined();
    expect((await call('POST', T, { name: '1bad name' })).status).toBe(400);
  });

  it('records the exact wire request', async () => {
    sb.clearRequests();
    await call('POST', '/customerAccounts/v1/payments?x=1&x=2', { amount: '10.00', readyToAutoApply: true });
    expect(sb.requests).toHaveLength(1);
    const r = sb.requests[0]!;
    expect(r).toMatchObject({
      method: 'POST',
      path: '/ccx/customerAccounts/v1/payments',
      query: { x: ['1', '2'] },
      body: { amount: '10.00', readyToAutoApply: true },
      contentType: 'application/json',
    });
    expect(r.headers.authorization).toMatch(/^Bearer /);
    const viaHttp = await body(await fetch(`${sb.url}/__sandbox/requests`));
    expect(viaHttp.data).toHaveLength(1);
    await fetch(`${sb.url}/__sandbox/requests`, { method: 'DELETE' });
    expect(sb.requests).toHaveLength(0);
  });
});

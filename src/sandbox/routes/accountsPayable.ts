import type { Hono } from 'hono';
import { badRequest, json, type SandboxEnv } from '../http.js';
import type { Db } from '../store.js';
import { resource } from './resource.js';

const P = '/ccx/accountsPayable/v1/supplierInvoiceRequests';
const num = (v: unknown) => (v === undefined || v === null || v === '' ? undefined : Number(v));

/** Line amount: extendedAmount, else amount, else quantity × unitCost. */
const lineAmount = (l: any) => num(l?.extendedAmount) ?? num(l?.amount) ?? (num(l?.quantity) ?? 0) * (num(l?.unitCost) ?? 0);

export function accountsPayableRoutes(app: Hono<SandboxEnv>, db: Db): void {
  const sir = resource(app, { coll: db.supplierInvoiceRequests });
  sir.list(P);
  sir.get(`${P}/:id`);
  sir.create(P, (body) => {
    for (const f of ['taxAmount', 'controlTotalAmount'] as const)
      if (body[f] !== undefined && !Number.isFinite(Number(body[f]))) throw badRequest(`${f} must be a decimal string`, f, 'INVALID_NUMBER');
    if (body.lines !== undefined && !Array.isArray(body.lines)) throw badRequest('lines must be an array', 'lines', 'INVALID_INPUT');
    if (Array.isArray(body.lines) && body.lines.length && body.controlTotalAmount !== undefined) {
      const lines = body.lines.reduce((s: number, l: any) => s + lineAmount(l), 0) + (num(body.taxAmount) ?? 0);
      if (Math.abs(lines - Number(body.controlTotalAmount)) > 0.005)
        throw badRequest(
          `control total amount ${body.controlTotalAmount} does not match line total ${lines.toFixed(2)}`,
          'controlTotalAmount',
          'CONTROL_TOTAL_MISMATCH',
        );
    }
    const n = 10000 + db.supplierInvoiceRequests.size;
    return {
      descriptor: `Supplier Invoice Request: SIR-${n}`,
      requestNumber: `SIR-${n}`,
      lines: [],
      ...body,
      status: { id: 'Draft', descriptor: 'Draft' },
    };
  });
  app.post(`${P}/:id/submit`, (c) => {
    const rec = sir.find(c);
    if (rec.status?.id === 'Submitted' || rec.status?.id === 'Approved')
      throw badRequest(`supplier invoice request ${rec.id} is already ${rec.status.descriptor}`, 'status', 'INVALID_STATE');
    rec.status = { id: 'Submitted', descriptor: 'Submitted' };
    return json(c, { id: rec.id, descriptor: rec.descriptor, status: rec.status }, 201);
  });

  const att = resource(app, { coll: db.sirAttachments, owner: db.supplierInvoiceRequests });
  att.list(`${P}/:owner/attachments`);
  att.get(`${P}/:owner/attachments/:id`);
  att.create(`${P}/:owner/attachments`, (body) => {
    if (typeof body.fileName !== 'string' || !body.fileName) throw badRequest('fileName is required', 'fileName', 'REQUIRED');
    return { descriptor: body.fileName, contentType: { id: 'application/octet-stream' }, ...body, fileLength: String(body.fileLength ?? '0') };
  });
}

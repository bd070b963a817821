import type { Hono } from 'hono';
import { badRequest, param, type SandboxEnv } from '../http.js';
import { makePdf } from '../data/pdf.js';
import type { Db } from '../store.js';
import { resource } from './resource.js';

const P = '/ccx/customerAccounts/v1';

export function customerAccountsRoutes(app: Hono<SandboxEnv>, db: Db): void {
  const inv = resource(app, { coll: db.invoices });
  inv.list(`${P}/invoices`);
  inv.get(`${P}/invoices/:id`);
  app.get(`${P}/invoicePDFs/:id`, (c) => {
    const i = db.invoices.require(param(c, 'id'));
    const pdf = makePdf([
      `Invoice ${i.invoiceNumber}`,
      `Customer: ${i.billToCustomer.descriptor}`,
      `Date: ${i.invoiceDate}`,
      `Total: ${i.totalAmount.value} ${i.totalAmount.currency}`,
      `Due: ${i.dueAmount.value} ${i.dueAmount.currency}`,
    ]);
    return new Response(new Uint8Array(pdf), {
      status: 200,
      headers: {
        'content-type': 'application/pdf',
        'content-length': String(pdf.length),
        'content-disposition': `attachment; filename="${i.invoiceNumber}.pdf"`,
      },
    });
  });

  const pay = resource(app, { coll: db.payments });
  pay.get(`${P}/payments/:id`);
  pay.create(`${P}/payments`, (body) => {
    if (body.amount === undefined || body.amount === '' || !Number.isFinite(Number(body.amount)))
      throw badRequest('amount is required and must be a decimal string', 'amount', 'REQUIRED');
    if (body.remitFromCustomer?.id && !db.customers.get(body.remitFromCustomer.id))
      throw badRequest(`unknown remitFromCustomer: ${body.remitFromCustomer.id}`, 'remitFromCustomer', 'INVALID_REFERENCE');
    return { descriptor: body.descriptor ?? `Customer Payment: ${body.amount}`, readyToAutoApply: true, ...body, amount: String(body.amount) };
  });
}

import type { Hono } from 'hono';
import { badRequest, objectBody, json, type SandboxEnv } from '../http.js';
import type { Db } from '../store.js';
import { dateRange, resource } from './resource.js';

const P = '/ccx/absenceManagement/v5';

export function absenceRoutes(app: Hono<SandboxEnv>, db: Db): void {
  resource(app, { coll: db.balances }).get(`${P}/balances/:id`);
  const range = dateRange('date');
  const details = resource(app, {
    coll: db.timeOffDetails,
    owner: db.workers,
    view: (r) => ({
      date: r.date,
      quantity: r.quantity,
      unit: r.unit,
      comment: r.comment,
      timeOffType: r.timeOffType,
      status: r.status,
      worker: r.worker,
    }),
  });
  details.list(`${P}/workers/:owner/timeOffDetails`, { custom: { fromDate: range, toDate: range } });

  app.post(`${P}/workers/:owner/requestTimeOff`, (c) => {
    const worker = details.ownerOf(c)!;
    const body = objectBody(c);
    if (!Array.isArray(body.days) || body.days.length === 0) throw badRequest('days must be a non-empty array', 'days', 'REQUIRED');
    body.days.forEach((d: any, i: number) => {
      if (!d || typeof d !== 'object' || !d.date) throw badRequest(`days[${i}].date is required`, 'days', 'REQUIRED');
    });
    const req = db.timeOffRequests.create(
      {
        descriptor: `Request Time Off: ${worker.descriptor}`,
        ...body,
        status: { id: 'Submitted', descriptor: 'Submitted' },
        worker: { id: worker.id, descriptor: worker.descriptor },
      },
      { _owner: worker.id },
    );
    for (const d of body.days) {
      db.timeOffDetails.create(
        {
          date: String(d.date).slice(0, 10),
          quantity: String(d.dailyQuantity ?? '8'),
          unit: { id: 'Hours', descriptor: 'Hours' },
          comment: d.comment ?? body.businessProcessParameters?.comment ?? '',
          timeOffType: d.timeOffType ?? { id: 'Vacation', descriptor: 'Vacation' },
          status: { id: 'Submitted', descriptor: 'Submitted' },
          worker: { id: worker.id, descriptor: worker.descriptor },
        },
        { _owner: worker.id, _request: req.id },
      );
    }
    const { _owner, ...out } = req;
    return json(c, out, 201);
  });
}

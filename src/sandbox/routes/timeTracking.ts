import type { Hono } from 'hono';
import { API_BASE, type SandboxEnv } from '../http.js';
import type { Db, Rec } from '../store.js';
import { dateRange, resource } from './resource.js';

const P = '/ccx/timeTracking/v5';

/** The time tracking view of a worker (same people as staffing, fewer fields). */
const ttWorker = (w: Rec) => ({
  id: w.id,
  descriptor: w.descriptor,
  href: `${API_BASE}/timeTracking/v5/workers/${w.id}`,
  workerId: w.workerId,
  primaryJob: { id: w.primaryJob.id, descriptor: w.primaryJob.descriptor },
  businessTitle: w.primaryJob.businessTitle,
  supervisoryOrganization: w.primaryJob.supervisoryOrganization,
  location: w.primaryJob.location,
  workerType: w.workerType,
});

export function timeTrackingRoutes(app: Hono<SandboxEnv>, db: Db): void {
  const workers = resource(app, { coll: db.workers, view: ttWorker });
  workers.list(`${P}/workers`);
  workers.get(`${P}/workers/:id`);

  const range = dateRange('dateTime');
  const events = resource(app, { coll: db.timeClockEvents });
  events.list(`${P}/timeClockEvents`, { custom: { fromDate: range, toDate: range }, resolve: { worker: db.workers } });
  events.get(`${P}/timeClockEvents/:id`);
  events.update('put', `${P}/timeClockEvents/:id`, (body, item) => ({ ...body, worker: item.worker }));
  events.remove(`${P}/timeClockEvents/:id`);

  const blocks = resource(app, { coll: db.timeBlocks, owner: db.workers });
  const B = `${P}/workers/:owner/workerTimeBlock`;
  blocks.create(B, (body, _c, owner) => ({
    descriptor: `Time Block: ${owner!.descriptor}`,
    doNotBill: false,
    ...body,
    worker: { id: owner!.id, descriptor: owner!.descriptor },
  }));
  blocks.get(`${B}/:id`);
  blocks.update('patch', `${B}/:id`);
  blocks.remove(`${B}/:id`);
  blocks.list(B);
}

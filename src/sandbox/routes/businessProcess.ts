import type { Hono } from 'hono';
import type { SandboxEnv } from '../http.js';
import type { Db } from '../store.js';
import { resource } from './resource.js';

const P = '/ccx/businessProcess/v1/events';

export function businessProcessRoutes(app: Hono<SandboxEnv>, db: Db): void {
  const events = resource(app, { coll: db.events });
  // The service answers a blank result unless exactly one `worker` query parameter is given.
  events.list(P, {
    blank: (q) => q.worker?.length !== 1,
    resolve: { worker: db.workers },
    custom: { worker: (i, q) => i._worker === q.worker![0] },
  });
  events.get(`${P}/:id`);
  const att = resource(app, { coll: db.eventAttachments, owner: db.events });
  att.list(`${P}/:owner/attachments`);
  att.get(`${P}/:owner/attachments/:id`);
}

import type { Hono } from 'hono';
import { API_BASE, badRequest, type SandboxEnv } from '../http.js';
import type { Db } from '../store.js';
import { resource } from './resource.js';

const P = '/ccx/api/common/v1';

export function commonRoutes(app: Hono<SandboxEnv>, db: Db): void {
  resource(app, { coll: db.customers }).get(`${P}/customers/:id`);
  const orgs = resource(app, { coll: db.organizations });
  orgs.list(`${P}/organizations`);
  orgs.get(`${P}/organizations/:id`);

  const titles = resource(app, { coll: db.businessTitleChanges, owner: db.workers });
  titles.list(`${P}/workers/:owner/businessTitleChanges`);
  titles.get(`${P}/workers/:owner/businessTitleChanges/:id`);
  titles.create(`${P}/workers/:owner/businessTitleChanges`, (body, _c, owner) => {
    if (typeof body.proposedBusinessTitle !== 'string' || !body.proposedBusinessTitle.trim())
      throw badRequest('proposedBusinessTitle is required', 'proposedBusinessTitle', 'REQUIRED');
    const current = owner!.primaryJob.businessTitle;
    owner!.primaryJob.businessTitle = body.proposedBusinessTitle;
    return {
      descriptor: `Business Title Change: ${owner!.descriptor}`,
      ...body,
      currentBusinessTitle: current,
      effective: new Date().toISOString(),
      status: { id: 'Successfully_Completed', descriptor: 'Successfully Completed' },
    };
  });

  resource(app, { coll: db.commonJobChanges, owner: db.workers }).create(`${P}/workers/:owner/jobChanges`, (body, _c, owner) => {
    if (body.supervisoryOrganization !== undefined && !db.organizations.get(body.supervisoryOrganization?.id ?? ''))
      throw badRequest(`unknown supervisoryOrganization: ${body.supervisoryOrganization?.id}`, 'supervisoryOrganization', 'INVALID_REFERENCE');
    return {
      descriptor: `Job Change: ${owner!.descriptor}`,
      moveManagersTeam: false,
      ...body,
      worker: { id: owner!.id, descriptor: owner!.descriptor, href: `${API_BASE}/staffing/v7/workers/${owner!.id}` },
      status: { id: 'In_Progress', descriptor: 'In Progress' },
    };
  });
}

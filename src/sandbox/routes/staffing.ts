import type { Hono } from 'hono';
import { API_BASE, json, param, queries, requireRef, type SandboxEnv } from '../http.js';
import { view, type Db, type Rec } from '../store.js';
import { pagedArray, resource, type Filter } from './resource.js';

const P = '/ccx/staffing/v7';
const refOf = (r: Rec) => ({ id: r.id, descriptor: r.descriptor, href: r.href });
const lc = (v: unknown) => String(v ?? '').toLowerCase();

export function staffingRoutes(app: Hono<SandboxEnv>, db: Db): void {
  const search: Filter = (i, q) => lc(i.descriptor).includes(lc(q.search![0]));
  const workers = resource(app, { coll: db.workers });
  workers.list(`${P}/workers`, { custom: { search } });
  workers.get(`${P}/workers/:id`);

  resource(app, {
    coll: db.serviceDates,
    owner: db.workers,
    view: (r) => ({ hireDate: r.hireDate, originalHireDate: r.originalHireDate, continuousServiceDate: r.continuousServiceDate }),
  }).list(`${P}/workers/:owner/serviceDates`);

  const skillName: Filter = (i, q) => (q.skill ?? q.skillName)!.some((s) => lc(i.descriptor).includes(lc(s)));
  const source: Filter = (i, q) => q.source!.some((s) => i.skillSources.some((x: any) => [x.id, x.descriptor, x.sourceType].map(lc).includes(lc(s))));
  resource(app, { coll: db.skills, owner: db.workers }).list(`${P}/workers/:owner/explicitSkills`, {
    custom: { skill: skillName, skillName, source },
  });

  const changes = [
    ['jobChanges', 'Job Change', db.jobChanges],
    ['organizationAssignmentChanges', 'Organization Assignment Change', db.orgAssignmentChanges],
  ] as const;
  for (const [seg, label, coll] of changes) {
    resource(app, { coll, owner: db.workers }).create(
      `${P}/workers/:owner/${seg}`,
      (body, _c, owner) => {
        requireRef(body, 'worker');
        const target = db.workers.get(body.worker.id);
        return {
          descriptor: `${label}: ${target?.descriptor ?? owner?.descriptor}`,
          ...body,
          status: { id: 'In_Progress', descriptor: 'In Progress' },
        };
      },
      {
        after: (rec) => {
          rec.href = `${API_BASE}/staffing/v7/${seg}/${rec.id}`;
        },
      },
    );
    app.get(`${P}/${seg}/:id`, (c) => json(c, view(coll.require(param(c, 'id')))));
    app.post(`${P}/${seg}/:id/submit`, (c) => {
      const rec = coll.update(param(c, 'id'), { status: { id: 'Submitted', descriptor: 'Submitted' } });
      return json(c, { id: rec.id, descriptor: rec.descriptor, status: rec.status, href: rec.href }, 201);
    });
  }

  const jobRefs = (w?: string) => {
    const ws = w !== undefined ? [db.workers.get(w)].filter((x): x is Rec => !!x) : db.workers.all();
    return ws.map((x) => ({ id: x.primaryJob.id, descriptor: x.primaryJob.descriptor, href: `${API_BASE}/staffing/v7/jobs/${x.primaryJob.id}` }));
  };
  for (const group of ['jobChangesGroup', 'organizationAssignmentChangesGroup']) {
    app.get(`${P}/values/${group}/workers`, (c) => pagedArray(c, db.workers.all().map(refOf)));
    app.get(`${P}/values/${group}/jobs`, (c) => pagedArray(c, jobRefs(queries(c).worker?.[0])));
  }
  app.get(`${P}/values/jobChangesGroup/reason`, (c) =>
    pagedArray(
      c,
      db.lookups.jobChangeReasons.map((r) => ({ ...r, href: `${API_BASE}/staffing/v7/values/jobChangesGroup/reason/${r.id}` })),
    ),
  );
}

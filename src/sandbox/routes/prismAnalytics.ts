import { createHash } from 'node:crypto';
import type { Hono } from 'hono';
import { badRequest, json, paging, queries, type SandboxEnv } from '../http.js';
import type { Db } from '../store.js';
import { view } from '../store.js';
import { fieldFilter, pagedArray, resource } from './resource.js';

const P = '/ccx/api/prismAnalytics/v3/:tenant';
const NAME = /^[A-Za-z][A-Za-z0-9_]{0,254}$/;

function checkTable(body: Record<string, any>, create: boolean) {
  if (create || body.name !== undefined)
    if (typeof body.name !== 'string' || !NAME.test(body.name))
      throw badRequest(
        'name is required: a letter followed by letters, digits or _',
        'name',
        create && body.name === undefined ? 'REQUIRED' : 'INVALID_NAME',
      );
  if (body.fields !== undefined) {
    if (!Array.isArray(body.fields)) throw badRequest('fields must be an array', 'fields', 'INVALID_INPUT');
    body.fields.forEach((f: any, i: number) => {
      if (!f || typeof f.name !== 'string' || !NAME.test(f.name)) throw badRequest(`fields[${i}].name is invalid`, 'fields', 'INVALID_NAME');
    });
  }
}

export function prismAnalyticsRoutes(app: Hono<SandboxEnv>, db: Db): void {
  const tables = resource(app, { coll: db.tables });
  tables.list(`${P}/tables`, { visible: (t) => !t._restricted });
  app.get(`${P}/tables/:id`, (c) => {
    const t = tables.find(c);
    const type = queries(c).type?.[0] ?? 'summary';
    if (!['summary', 'full', 'permissions'].includes(type)) throw badRequest(`type must be summary, full or permissions`, 'type', 'INVALID_INPUT');
    const v = view(t);
    if (type === 'summary') delete v.fields;
    if (type === 'permissions') Object.assign(v, { permissions: { canEdit: true, canView: true, canInsert: true, canDelete: false } });
    return json(c, v);
  });
  tables.create(`${P}/tables`, (body) => {
    checkTable(body, true);
    if (db.tables.all().some((t) => t.name === body.name)) throw badRequest(`a table named ${body.name} already exists`, 'name', 'DUPLICATE_NAME');
    const now = new Date().toISOString();
    return {
      displayName: body.name,
      description: '',
      documentation: '',
      tags: [],
      fields: [],
      enableForAnalysis: false,
      ...body,
      createdMoment: now,
      updatedMoment: now,
    };
  });
  tables.update('put', `${P}/tables/:id`, (body) => {
    checkTable(body, false);
    return { ...body, updatedMoment: new Date().toISOString() };
  });

  // Data changes: the response shape depends on `type` (none → id, name, displayName; any type → the full record).
  const dcs = resource(app, { coll: db.dataChanges });
  app.get(`${P}/dataChanges`, (c) => {
    const q = queries(c);
    paging(q);
    const short = !q.type?.[0];
    const items = db.dataChanges
      .all()
      .filter((d) => fieldFilter(d, q))
      .map((d) => (short ? { id: d.id, name: d.name, displayName: d.displayName } : view(d)));
    return pagedArray(c, items);
  });
  dcs.get(`${P}/dataChanges/:id`);

  resource(app, { coll: db.fileContainers, view: (r) => ({ id: r.id }) }).create(
    `${P}/fileContainers`,
    () => ({ createdMoment: new Date().toISOString() }),
    { emptyBody: true },
  );
  const files = resource(app, { coll: db.files, owner: db.fileContainers });
  files.list(`${P}/fileContainers/:owner/files`);
  app.post(`${P}/fileContainers/:owner/files`, (c) => {
    const container = files.ownerOf(c)!;
    const body = c.get('body') as { files?: Array<{ name: string; filename: string; base64: string }> } | undefined;
    const part = body && typeof body === 'object' && Array.isArray(body.files) ? body.files.find((f) => f.name === 'file') : undefined;
    if (!part) throw badRequest('multipart/form-data with a part named "file" is required', 'file', 'REQUIRED');
    const bytes = Buffer.from(part.base64, 'base64');
    const name = part.filename || 'upload.csv';
    const rec = db.files.create(
      {
        descriptor: name,
        name,
        checksum: createHash('md5').update(bytes).digest('hex'),
        length: String(bytes.length),
        state: { id: 'Success', descriptor: 'Success' },
      },
      { _owner: container.id, _base64: part.base64 },
    );
    return json(c, view(rec), 201);
  });
}

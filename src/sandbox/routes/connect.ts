import type { Hono } from 'hono';
import { badRequest, json, objectBody, type SandboxEnv } from '../http.js';
import type { Db } from '../store.js';
import { resource } from './resource.js';

const P = '/ccx/connect/v2';

export function connectRoutes(app: Hono<SandboxEnv>, db: Db): void {
  const t = resource(app, { coll: db.messageTemplates });
  t.list(`${P}/messageTemplates`, {
    custom: {
      name: (i, q) => q.name!.some((n) => String(i.name).toLowerCase().includes(n.toLowerCase())),
      inactive: (i, q) => q.inactive!.some((v) => String(i.inactive) === v.toLowerCase()),
    },
  });
  t.get(`${P}/messageTemplates/:id`);
  t.create(`${P}/messageTemplates`, (body) => {
    if (typeof body.name !== 'string' || !body.name.trim()) throw badRequest('name is required', 'name', 'REQUIRED');
    if (body.inactive !== undefined && typeof body.inactive !== 'boolean')
      throw badRequest('inactive must be a boolean', 'inactive', 'INVALID_INPUT');
    return { descriptor: body.descriptor ?? body.name, inactive: true, ...body };
  });
  t.update('put', `${P}/messageTemplates/:id`, (body) => {
    if (body.inactive !== undefined && typeof body.inactive !== 'boolean')
      throw badRequest('inactive must be a boolean', 'inactive', 'INVALID_INPUT');
    return { ...body, ...(body.name && !body.descriptor ? { descriptor: body.name } : {}) };
  });

  app.post(`${P}/sendMessage`, (c) => {
    const body = objectBody(c);
    if (!Array.isArray(body.recipients) || body.recipients.length === 0)
      throw badRequest('recipients must be a non-empty array', 'recipients', 'REQUIRED');
    if (body.messageTemplate?.id && !db.messageTemplates.get(body.messageTemplate.id))
      throw badRequest(`unknown messageTemplate: ${body.messageTemplate.id}`, 'messageTemplate', 'INVALID_REFERENCE');
    const msg = db.messages.create({
      descriptor: 'Message',
      ...body,
      sentMoment: new Date().toISOString(),
      status: { id: 'Sent', descriptor: 'Sent' },
    });
    return json(c, msg, 201);
  });
}

import type { Hono } from 'hono';
import type { SandboxEnv } from '../http.js';
import type { Db } from '../store.js';
import { resource } from './resource.js';

export function personRoutes(app: Hono<SandboxEnv>, db: Db): void {
  const people = resource(app, { coll: db.people });
  people.list('/ccx/person/v4/people', {
    custom: { universal_ID: (i, q) => q.universal_ID!.includes(i.universal_ID.id) },
  });
  people.get('/ccx/person/v4/people/:id');
}

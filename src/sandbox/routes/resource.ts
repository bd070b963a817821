import type { Hono } from 'hono';
import { json, notFound, objectBody, paging, param, queries, type Ctx, type SandboxEnv } from '../http.js';
import { view, type Collection, type Rec } from '../store.js';

export type Query = Record<string, string[]>;
export type Filter = (item: Rec, q: Query) => boolean;
type Body = Record<string, any>;

const RESERVED = new Set(['limit', 'offset', 'type', 'view', 'format']);
const norm = (v: unknown) => String(v).toLowerCase();

/** Generic query filter: a param naming a top-level field matches its string/bool value or a reference's id/descriptor. */
export function fieldFilter(item: Rec, q: Query, skip: ReadonlySet<string> = RESERVED): boolean {
  for (const [k, values] of Object.entries(q)) {
    if (RESERVED.has(k) || skip.has(k) || !(k in item) || k.startsWith('_')) continue;
    const v = item[k];
    const candidates = v && typeof v === 'object' ? [v.id, v.descriptor, v.name] : [v];
    const ok = values.some((want) => candidates.some((cand) => cand !== undefined && cand !== null && norm(cand) === norm(want)));
    if (!ok) return false;
  }
  return true;
}

/** Keep items whose `field` (ISO date/time) falls within fromDate..toDate (inclusive, by date prefix). */
export const dateRange =
  (field: string): Filter =>
  (item, q) => {
    const v = String(item[field] ?? '');
    const from = q.fromDate?.[0];
    const to = q.toDate?.[0];
    const cmp = (bound: string) =>
      (bound.length <= 10 ? v.slice(0, 10) : v).localeCompare(bound.length <= 10 ? bound : new Date(bound).toISOString());
    if (from && cmp(from) < 0) return false;
    if (to && cmp(to) > 0) return false;
    return true;
  };

/** Answer a paged `{data, total}` envelope from a plain array. */
export function pagedArray(c: Ctx, items: unknown[]): Response {
  const { limit, offset } = paging(queries(c));
  return json(c, { data: items.slice(offset, offset + limit), total: items.length });
}

export interface ResourceOpts {
  coll: Collection;
  /** Parent collection resolved from the `:owner` path parameter. */
  owner?: Collection;
  view?: (item: Rec) => unknown;
}

/** Compact CRUD route registration for one resource. Item routes use `:id`, nested routes `:owner`. */
export function resource(app: Hono<SandboxEnv>, o: ResourceOpts) {
  const show = o.view ?? view;
  const ownerOf = (c: Ctx) => (o.owner ? o.owner.require(param(c, 'owner')) : undefined);
  const find = (c: Ctx): Rec => {
    const owner = ownerOf(c);
    const id = param(c, 'id');
    const item = o.coll.require(id);
    if (owner && item._owner !== owner.id) throw notFound(o.coll.what, id);
    return item;
  };
  return {
    find,
    ownerOf,
    /**
     * `custom` filters own their query keys (the generic field filter skips them); `resolve` maps query values
     * through a collection's aliases (e.g. worker=Employee_ID=21001 → the worker's id) before filtering.
     */
    list(
      path: string,
      opts: {
        custom?: Record<string, Filter>;
        filters?: Filter[];
        resolve?: Record<string, Collection>;
        blank?: (q: Query) => boolean;
        visible?: (i: Rec) => boolean;
      } = {},
    ) {
      const skip = new Set([...RESERVED, ...Object.keys(opts.custom ?? {})]);
      app.get(path, (c) => {
        const owner = ownerOf(c);
        const q = { ...queries(c) };
        const { limit, offset } = paging(q);
        if (opts.blank?.(q)) return json(c, { data: [], total: 0 });
        for (const [k, coll] of Object.entries(opts.resolve ?? {})) if (q[k]) q[k] = q[k]!.map((v) => coll.get(v)?.id ?? v);
        const filters: Filter[] = [(i, qq) => fieldFilter(i, qq, skip), ...(opts.filters ?? [])];
        for (const [k, f] of Object.entries(opts.custom ?? {})) filters.push((i, qq) => qq[k] === undefined || f(i, qq));
        const items = (owner ? o.coll.ownedBy(owner.id) : o.coll.all()).filter((i) => (opts.visible?.(i) ?? true) && filters.every((f) => f(i, q)));
        return json(c, { data: items.slice(offset, offset + limit).map(show), total: items.length });
      });
    },
    get(path: string) {
      app.get(path, (c) => json(c, show(find(c))));
    },
    /** POST → 201 with the new record; `build` validates and shapes the body, `after` may use the new id. */
    create(
      path: string,
      build: (body: Body, c: Ctx, owner?: Rec) => Body = (b) => b,
      opts: { emptyBody?: boolean; after?: (rec: Rec, owner?: Rec) => void } = {},
    ) {
      app.post(path, (c) => {
        const owner = ownerOf(c);
        const body = objectBody(c, opts.emptyBody);
        const rec = o.coll.create(build(body, c, owner), owner ? { _owner: owner.id } : {});
        opts.after?.(rec, owner);
        return json(c, show(rec), 201);
      });
    },
    update(method: 'put' | 'patch', path: string, validate: (body: Body, item: Rec) => Body = (b) => b) {
      app[method](path, (c) => {
        const item = find(c);
        const body = validate(objectBody(c), item);
        return json(c, show(o.coll.update(item.id, body)));
      });
    },
    remove(path: string) {
      app.delete(path, (c) => {
        o.coll.remove(find(c).id);
        return json(c, {});
      });
    },
  };
}

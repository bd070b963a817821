import type { Context } from 'hono';
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface SandboxEnv {
  Variables: { body: unknown };
  Bindings: { incoming?: IncomingMessage; outgoing?: ServerResponse };
}
export type Ctx = Context<SandboxEnv>;

export interface FieldError {
  error: string;
  code: string;
  field?: string;
  path?: string;
}

/** Thrown by handlers and helpers; turned into a JSON error response by the app's onError. */
export class HttpError extends Error {
  constructor(
    public status: number,
    message: string,
    public errors?: FieldError[],
    public extra?: Record<string, unknown>,
  ) {
    super(message);
  }
  body(): Record<string, unknown> {
    return { ...(this.extra ?? {}), error: this.message, ...(this.errors ? { errors: this.errors } : {}) };
  }
}

export const notFound = (what: string, id: string) => new HttpError(404, `${what} not found: ${id}`);
export const badRequest = (message: string, field?: string, code = 'INVALID_INPUT') =>
  new HttpError(400, message, [{ error: message, code, ...(field ? { field } : {}) }]);

/** Placeholder stored in seeded hrefs; replaced with the real API base when a response is sent. */
export const API_BASE = '{{api}}';

export function originOf(c: Ctx): string {
  const u = c.req.url;
  const start = u.indexOf('/', u.indexOf(':') + 3);
  return start === -1 ? u : u.slice(0, start);
}

/** The request path exactly as received (no decoding, no query). */
export function rawPath(c: Ctx): string {
  const u = c.req.url;
  const start = u.indexOf('/', u.indexOf(':') + 3);
  if (start === -1) return '/';
  const q = u.indexOf('?', start);
  return u.slice(start, q === -1 ? undefined : q);
}

export function json(c: Ctx, data: unknown, status = 200): Response {
  const text = JSON.stringify(data ?? {})
    .split(API_BASE)
    .join(`${originOf(c)}/ccx`);
  return new Response(text, { status, headers: { 'content-type': 'application/json; charset=utf-8' } });
}

export function queries(c: Ctx): Record<string, string[]> {
  return c.req.queries() ?? {};
}

export function param(c: Ctx, name: string): string {
  const v = (c.req.param() as Record<string, string | undefined>)[name];
  if (v === undefined) throw new HttpError(500, `route has no :${name} parameter`);
  return v;
}

/** Parse limit/offset; limit default 20 (1..100), offset default 0. */
export function paging(q: Record<string, string[]>): { limit: number; offset: number } {
  const one = (k: string) => (q[k] && q[k]!.length ? q[k]![q[k]!.length - 1]! : undefined);
  const l = one('limit');
  const o = one('offset');
  const limit = l === undefined || l === '' ? 20 : Number(l);
  const offset = o === undefined || o === '' ? 0 : Number(o);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100)
    throw badRequest(`limit must be an integer between 1 and 100 (got ${l})`, 'limit', 'INVALID_LIMIT');
  if (!Number.isInteger(offset) || offset < 0) throw badRequest(`offset must be a non-negative integer (got ${o})`, 'offset', 'INVALID_OFFSET');
  return { limit, offset };
}

/** The JSON body parsed by the recorder; must be an object for writes. */
export function objectBody(c: Ctx, optional = false): Record<string, any> {
  const b = c.get('body');
  if ((b === undefined || b === '' || b === null) && optional) return {};
  if (typeof b !== 'object' || b === null || Array.isArray(b)) throw badRequest('request body must be a JSON object', undefined, 'INVALID_BODY');
  if ('fields' in b && 'files' in b && !c.req.header('content-type')?.includes('json'))
    throw badRequest('expected a JSON body', undefined, 'INVALID_BODY');
  return b as Record<string, any>;
}

export function requireRef(body: Record<string, any>, field: string): string {
  const v = body[field];
  if (!v || typeof v !== 'object' || typeof v.id !== 'string' || !v.id) throw badRequest(`${field}.id is required`, field, 'REQUIRED');
  return v.id;
}

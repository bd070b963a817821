import type { MiddlewareHandler } from 'hono';
import { rawPath, type SandboxEnv } from './http.js';

export interface RecordedFile {
  name: string;
  filename: string;
  contentType: string;
  size: number;
  base64: string;
}
export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string | string[]>;
  headers: Record<string, string>;
  body: unknown;
  contentType?: string;
}

export async function parseBody(req: Request): Promise<unknown> {
  if (req.method === 'GET' || req.method === 'HEAD') return undefined;
  const ct = req.headers.get('content-type') ?? '';
  const buf = Buffer.from(await req.arrayBuffer());
  if (buf.length === 0) return undefined;
  const text = () => buf.toString('utf8');
  if (/json/i.test(ct)) {
    try {
      return JSON.parse(text());
    } catch {
      return text();
    }
  }
  if (/application\/x-www-form-urlencoded/i.test(ct)) return Object.fromEntries(new URLSearchParams(text()));
  if (/multipart\/form-data/i.test(ct)) {
    try {
      const fd = await new Response(buf, { headers: { 'content-type': ct } }).formData();
      const fields: Record<string, string> = {};
      const files: RecordedFile[] = [];
      for (const [name, v] of fd.entries()) {
        if (typeof v === 'string') fields[name] = v;
        else {
          const bytes = Buffer.from(await v.arrayBuffer());
          files.push({
            name,
            filename: v.name,
            contentType: v.type || 'application/octet-stream',
            size: bytes.length,
            base64: bytes.toString('base64'),
          });
        }
      }
      return { fields, files };
    } catch {
      return text();
    }
  }
  return text();
}

/** Parses the body once (stored as c.var.body) and records API and token requests. */
export function recorder(requests: RecordedRequest[], tokenRequests: RecordedRequest[]): MiddlewareHandler<SandboxEnv> {
  return async (c, next) => {
    if (c.req.path.startsWith('/__sandbox')) return next();
    const body = await parseBody(c.req.raw);
    c.set('body', body);
    const path = rawPath(c);
    const target = /^\/ccx\/oauth2\//.test(c.req.path) ? tokenRequests : /^\/ccx(\/|$)/.test(c.req.path) ? requests : undefined;
    if (target) {
      const query: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(c.req.queries() ?? {})) query[k] = v.length === 1 ? v[0]! : v;
      const headers: Record<string, string> = {};
      c.req.raw.headers.forEach((v, k) => {
        headers[k] = v;
      });
      const ct = c.req.header('content-type');
      target.push({ method: c.req.method, path, query, headers, body, ...(ct ? { contentType: ct } : {}) });
    }
    return next();
  };
}

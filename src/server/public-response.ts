/**
 * Headers on everything the public edge answers — webhooks, callback URLs, the OAuth callback and
 * `/healthz` (src/server/surfaces.ts) — whoever wrote the answer: the integration, intake's
 * rejections or the app's error handler. Webhook answers carry what integrations choose,
 * including an uploaded file echoed back with the caller's own content type; on the console's
 * origin such a page could script the console. `sandbox` gives any document an opaque origin and
 * no scripts, `default-src 'none'` loads nothing, `nosniff` keeps a browser from reading a body as
 * anything but its declared type (docs/security.md "Webhook responses").
 */
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from './types.js';

export const PUBLIC_EDGE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "sandbox; default-src 'none'",
  'x-content-type-options': 'nosniff',
};

/** Adds PUBLIC_EDGE_HEADERS to every answer of a path `isPublic` names (set last: nothing overrides them). */
export function publicEdgeHeaders(isPublic: (path: string) => boolean): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await next();
    if (!isPublic(c.req.path)) return;
    for (const [name, value] of Object.entries(PUBLIC_EDGE_HEADERS)) c.res.headers.set(name, value);
  };
}

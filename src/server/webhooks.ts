/**
 * Webhook routes: a thin Hono adapter over src/triggers/webhook/intake.ts, which holds the whole
 * intake policy. Here only: Node/Hono request → plain `IntakeRequest` (the body read as a stream
 * with the webhook's size limit, src/server/read-body.ts), `handleWebhook`, plain response → wire.
 * Unexpected failures go to the app's one error handler (src/server/app.ts).
 */
import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import type { Runtime } from '../runtime/runtime.js';
import { webhookIntakeHost } from '../runtime/webhook-intake.js';
import { handleWebhook, type IntakeRequest } from '../triggers/webhook/intake.js';
import type { RenderedResponse } from '../triggers/webhook/response.js';
import { discardRest, readBody } from './read-body.js';
import type { AppEnv } from './types.js';

const PREFIX = '/webhooks/';

export function webhookHandler(runtime: Runtime) {
  const host = webhookIntakeHost(runtime);
  return async (c: Context<AppEnv>): Promise<Response> => {
    const answer = await handleWebhook(plainRequest(c), host);
    c.set('routeLabel', answer.route);
    if (answer.integration) c.set('integration', answer.integration);
    return send(c, answer);
  };
}

function plainRequest(c: Context<AppEnv>): IntakeRequest {
  const incoming = c.env?.incoming as IncomingMessage | undefined;
  // Raw path + query from Node (no URL object on the hot path).
  let rawUrl = incoming?.url;
  // An absolute-form target (`POST http://host/webhooks/T HTTP/1.1`, as proxies send) is routed
  // like its origin form: the path starts after the authority.
  if (rawUrl !== undefined && rawUrl.charCodeAt(0) !== 47 /* / */) rawUrl = originForm(rawUrl);
  if (rawUrl === undefined) {
    const url = new URL(c.req.url);
    rawUrl = url.pathname + url.search;
  }
  const q = rawUrl.indexOf('?');
  return {
    method: c.req.method,
    path: (q < 0 ? rawUrl : rawUrl.slice(0, q)).slice(PREFIX.length),
    query: q < 0 ? '' : rawUrl.slice(q + 1),
    headers: incoming ? nodeHeaders(incoming) : webHeaders(c.req.raw.headers),
    body: (limit) => readBody(incoming, c.req.raw, limit),
    remoteAddress: incoming?.socket?.remoteAddress,
  };
}

/** `http://host:port/p?q` → `/p?q` (`/` when the path is empty); anything else is left as it is. */
function originForm(target: string): string {
  const m = /^https?:\/\/[^/?#]*/i.exec(target);
  if (!m) return target;
  const rest = target.slice(m[0].length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}

function send(c: Context<AppEnv>, r: RenderedResponse): Response {
  const incoming = c.env?.incoming as IncomingMessage | undefined;
  if (r.headers.connection === 'close' && incoming && !incoming.readableEnded) return lingeringAnswer(c, r, bytesOf(r.body), incoming);
  return c.body(typeof r.body === 'string' ? r.body : bytesOf(r.body), r.status as 200, r.headers);
}

function bytesOf(body: string | Buffer): Uint8Array<ArrayBuffer> {
  const b = typeof body === 'string' ? Buffer.from(body) : body;
  return new Uint8Array(b.buffer as ArrayBuffer, b.byteOffset, b.byteLength);
}

/**
 * An answer that closes the connection while the caller is still sending its body (the 413 of a
 * body past `maxBodyBytes`): the answer goes out at once, but the response ends — and Node closes
 * the socket — only after the rest of the body was read and discarded, within the bounds of
 * `discardRest`. Closing earlier resets the connection under a client still writing, and Node's
 * fetch then reports EPIPE instead of the 413 (it did in about a third of the tries).
 */
function lingeringAnswer(c: Context<AppEnv>, r: RenderedResponse, body: Uint8Array, incoming: IncomingMessage): Response {
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      if (body.byteLength > 0) controller.enqueue(body);
      await discardRest(incoming);
      controller.close();
    },
  });
  return c.body(stream, r.status as 200, { ...r.headers, 'content-length': String(body.byteLength) });
}

// Header names are the caller's choice: the objects holding them have no prototype.
export function nodeHeaders(incoming: IncomingMessage): Record<string, string> {
  const out = Object.create(null) as Record<string, string>;
  const h = incoming.headers;
  for (const k in h) {
    const v = h[k];
    if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

export function webHeaders(headers: Headers): Record<string, string> {
  const out = Object.create(null) as Record<string, string>;
  headers.forEach((v, k) => {
    out[k.toLowerCase()] = v;
  });
  return out;
}

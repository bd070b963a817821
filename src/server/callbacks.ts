/**
 * `ANY /callbacks/{token}` (docs/server.md "Waiting executions and callbacks"): the one request a
 * callback URL made by `core.callback` accepts. The request is recorded — and its waiting
 * execution made due — in one commit before it is answered `202 {"executionId"}`, so a crash right
 * after the answer still resumes the execution. Later requests answer 409, unknown or expired
 * tokens 404 (before the body is read), an unusable store 503 (the app's error handler). A public
 * edge path: its answers carry the public edge's headers (surfaces.ts, public-response.ts).
 */
import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import { HttpError } from '../common/errors.js';
import { CALLBACK_MAX_BODY_BYTES, callbackRequest } from '../runtime/callback-request.js';
import { CALLBACK_PATH, CALLBACK_TOKEN } from '../runtime/durable-host.js';
import type { Runtime } from '../runtime/runtime.js';
import { readBody } from './read-body.js';
import type { AppEnv } from './types.js';
import { nodeHeaders, webHeaders } from './webhooks.js';

export const CALLBACK_ROUTE = '/callbacks/:token';

const unknownCallback = () => new HttpError(404, 'no callback at this URL (unknown or expired)');
const usedCallback = () => new HttpError(409, 'this callback URL was used already; it accepts one request');

export function callbackHandler(runtime: Runtime) {
  return async (c: Context<AppEnv>): Promise<Response> => {
    c.set('routeLabel', CALLBACK_ROUTE);
    const token = c.req.path.slice(CALLBACK_PATH.length);
    // Not a token we could have made: no store lookup.
    if (!CALLBACK_TOKEN.test(token)) throw unknownCallback();
    // A probe (a link preview's HEAD, a browser's CORS preflight) must not take the URL's one request.
    if (c.req.method === 'HEAD' || c.req.method === 'OPTIONS') throw notARequest(c.req.method);
    // Cheap answers before reading a body a stranger may make large.
    const entry = await runtime.store.getCallback(token);
    if (!entry || Date.parse(entry.expiresAt) <= Date.now()) throw unknownCallback();
    if (entry.request) throw usedCallback();
    c.set('integration', entry.integration);

    const incoming = c.env?.incoming as IncomingMessage | undefined;
    const headers = incoming ? nodeHeaders(incoming) : webHeaders(c.req.raw.headers);
    if (Number(headers['content-length'] ?? 0) > CALLBACK_MAX_BODY_BYTES) throw tooLarge();
    const rawBody = await readBody(incoming, c.req.raw, CALLBACK_MAX_BODY_BYTES).catch((err: unknown) => {
      throw err instanceof HttpError && err.status === 413 ? tooLarge() : err;
    });
    const url = incoming?.url ?? new URL(c.req.url).pathname + new URL(c.req.url).search;
    const q = url.indexOf('?');
    const receivedAt = new Date().toISOString();
    const request = callbackRequest({ method: c.req.method, query: q < 0 ? '' : url.slice(q + 1), headers, rawBody }, runtime.intake, receivedAt);

    const receipt = await runtime.store.receiveCallback(token, request, new Date(receivedAt));
    if (receipt.outcome === 'unknown') throw unknownCallback();
    if (receipt.outcome === 'used') throw usedCallback();
    runtime.callbackReceived();
    runtime.logger?.info({ executionId: receipt.executionId, integration: entry.integration, step: entry.step }, 'callback request received');
    return c.json({ executionId: receipt.executionId }, 202, { 'x-execution-id': receipt.executionId });
  };
}

function notARequest(method: string): HttpError {
  return new HttpError(405, `${method} does not answer a callback URL; send GET, POST, PUT, PATCH or DELETE`, {
    allow: 'GET, POST, PUT, PATCH, DELETE',
  });
}

function tooLarge(): HttpError {
  return new HttpError(413, `request body exceeds the callback limit of ${CALLBACK_MAX_BODY_BYTES} bytes`, { connection: 'close' });
}

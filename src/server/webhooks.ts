/**
 * Webhook intake: `ANY /webhooks/{token}[/…]` (live) and `ANY /webhooks/test/{token}[/…]` (test).
 * Order matters for the promises of docs/promises.md: every rejection (404, 405, 413, 429, 401, 400)
 * happens before anything is recorded, and an accepted request is answered only after the
 * store committed its execution.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import type { CompiledIntegration, WebhookOptions } from '../definition/types.js';
import { bareScope } from '../engine/connections.js';
import { evaluateTemplate } from '../engine/evaluate.js';
import { StorageUnavailableError } from '../common/errors.js';
import { BusyError } from '../runtime/dispatcher.js';
import { isWebhookLike, type Runtime } from '../runtime/runtime.js';
import type { NewExecution } from '../store/types.js';
import { buildWebhookTrigger } from '../triggers/webhook/trigger-data.js';
import { verifyHmac } from '../triggers/webhook/hmac.js';
import { WebhookRejection, type WebhookRequest } from '../triggers/webhook/request.js';
import { asyncWebhookResponse, renderResponse, syncWebhookResponse, type RenderedResponse } from '../triggers/webhook/response.js';
import { readBody } from './read-body.js';
import type { AppEnv } from './types.js';

const PREFIX = '/webhooks/';

export function webhookHandler(runtime: Runtime) {
  return async (c: Context<AppEnv>): Promise<Response> => {
    const incoming = c.env?.incoming as IncomingMessage | undefined;
    try {
      return await intake(runtime, c, incoming);
    } catch (err) {
      if (err instanceof WebhookRejection) return send(c, { status: err.status, headers: { ...err.headers, 'content-type': 'application/json' }, body: JSON.stringify({ error: err.message }) });
      if (err instanceof BusyError) {
        return send(c, {
          status: err.shuttingDown ? 503 : 429,
          headers: { 'retry-after': String(err.retryAfterSec), 'content-type': 'application/json' },
          body: JSON.stringify({ error: err.message }),
        });
      }
      if (err instanceof StorageUnavailableError) {
        // A full, read-only or corrupt database is the operator's to fix; callers should retry later.
        runtime.logger?.error({ err: err.message }, 'webhook refused: storage unavailable');
        return send(c, { status: 503, headers: { 'retry-after': String(err.retryAfterSec), 'content-type': 'application/json' }, body: JSON.stringify({ error: err.message }) });
      }
      runtime.logger?.error({ err: (err as Error).message }, 'webhook intake failed');
      return send(c, { status: 500, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ error: `internal error: ${(err as Error).message}` }) });
    }
  };
}

async function intake(runtime: Runtime, c: Context<AppEnv>, incoming: IncomingMessage | undefined): Promise<Response> {
  // Raw path + query from Node (no URL object on the hot path).
  const rawUrl = incoming?.url ?? new URL(c.req.url).pathname + new URL(c.req.url).search;
  const q = rawUrl.indexOf('?');
  const path = q < 0 ? rawUrl : rawUrl.slice(0, q);
  const query = q < 0 ? '' : rawUrl.slice(q + 1);
  let rest = path.slice(PREFIX.length);
  let test = false;
  if (rest.startsWith('test/')) {
    test = true;
    rest = rest.slice(5);
  }
  const slash = rest.indexOf('/');
  const token = slash < 0 ? rest : rest.slice(0, slash);
  const fragment = slash < 0 ? '' : decodePath(rest.slice(slash + 1));
  c.set('routeLabel', test ? '/webhooks/test/:token' : '/webhooks/:token');

  const name = runtime.tokens.cachedIntegration(token) ?? (await runtime.tokens.resolve(token));
  const integration = name ? runtime.registry.get(name) : undefined;
  if (!integration || !isWebhookLike(integration)) throw new WebhookRejection(404, 'no webhook at this URL');
  // A disabled integration's live URL does not exist; its test URL still answers (docs/server.md "Webhook intake").
  if (!test && !integration.enabled) throw new WebhookRejection(404, 'no webhook at this URL (the integration is disabled; its test URL still works)');
  c.set('integration', integration.name);
  const options = integration.trigger as WebhookOptions & { type: string };

  const method = c.req.method.toUpperCase();
  if (!options.methods.includes(method)) {
    throw new WebhookRejection(405, `method ${method} is not allowed for this webhook; use ${options.methods.join(', ')}`, { allow: options.methods.join(', ') });
  }
  const declared = Number(incoming?.headers['content-length'] ?? c.req.header('content-length') ?? 0);
  if (declared > options.maxBodyBytes) {
    throw new WebhookRejection(413, `request body exceeds this webhook's limit of ${options.maxBodyBytes} bytes (maxBodyBytes)`, { connection: 'close' });
  }
  // Cheap backpressure before reading and parsing the body (the global backlog and this integration's share).
  runtime.dispatcher.checkCapacity(1, integration.name);

  const rawBody = await readBody(incoming, c.req.raw, options.maxBodyBytes);
  const headers = incoming ? nodeHeaders(incoming) : webHeaders(c.req.raw.headers);
  if (options.hmac) {
    const check = verifyHmac(options.hmac, await signingSecret(runtime, integration, options.hmac), rawBody, headers);
    if (!check.ok) throw new WebhookRejection(401, `request signature rejected: ${check.reason}`);
  }

  const executionId = randomUUID();
  const receivedAt = new Date().toISOString();
  const request: WebhookRequest = { method, pathFragment: fragment, query, headers, rawBody };
  const trigger = buildWebhookTrigger(request, { webhookUrls: runtime.webhookUrls(integration.name)!, executionId, receivedAt }, runtime.intake);

  if (test && runtime.isListening(integration.name)) {
    await runtime.addCapture({ id: randomUUID(), integration: integration.name, receivedAt, trigger });
  }
  const execution: NewExecution = { id: executionId, integration: integration.name, trigger, test, attempt: 1, queuedAt: receivedAt };
  const response = options.response;
  if (response.mode === 'sync') return syncRun(runtime, c, integration, execution, response.timeoutMs);

  await runtime.dispatcher.submit([execution]);
  // The same answer `hcm-runner test` checks: the custom response, or 200 {"executionId"}.
  const answer = await asyncWebhookResponse(integration, trigger, { id: executionId, test, receivedAt }, runtime.env);
  // The execution is recorded and will run; only the custom answer failed.
  if (answer.error) runtime.logger?.warn({ executionId, integration: integration.name }, answer.error);
  return send(c, answer.response);
}

async function syncRun(runtime: Runtime, c: Context<AppEnv>, integration: CompiledIntegration, execution: NewExecution, timeoutMs: number): Promise<Response> {
  const id = execution.id;
  const watch = runtime.dispatcher.watch(id);
  try {
    await runtime.dispatcher.submit([execution]);
  } catch (err) {
    watch.cancel();
    throw err;
  }
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([watch.outcome, new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), timeoutMs)))]);
  clearTimeout(timer);
  const json = (status: number, body: unknown) => send(c, { status, headers: { 'content-type': 'application/json', 'x-execution-id': id }, body: JSON.stringify(body) });
  if (outcome === 'timeout') {
    return json(504, { error: `integration ${integration.name}: the synchronous run did not finish within ${timeoutMs} ms; it continues in the background`, executionId: id });
  }
  if (outcome.kind === 'response') return send(c, renderResponse(outcome.response, { 'x-execution-id': id }));
  // The same rule `hcm-runner test` checks: what a step set, else 500 on failure, else 200 with the last results.
  return send(c, syncWebhookResponse(outcome.record));
}

function send(c: Context<AppEnv>, r: RenderedResponse): Response {
  return c.body(typeof r.body === 'string' ? r.body : new Uint8Array(r.body.buffer as ArrayBuffer, r.body.byteOffset, r.body.byteLength), r.status as 200, r.headers);
}

// Header names are the caller's choice: the objects holding them have no prototype.
function nodeHeaders(incoming: IncomingMessage): Record<string, string> {
  const out = Object.create(null) as Record<string, string>;
  const h = incoming.headers;
  for (const k in h) {
    const v = h[k];
    if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

function webHeaders(headers: Headers): Record<string, string> {
  const out = Object.create(null) as Record<string, string>;
  headers.forEach((v, k) => (out[k.toLowerCase()] = v));
  return out;
}

function decodePath(p: string): string {
  try {
    return decodeURIComponent(p);
  } catch {
    return p;
  }
}

/** Storage errors (SQLite/PostgreSQL codes) that mean "not now", not "this request is wrong". */
/**
 * The HMAC secret of an integration version, read once (a reload compiles a new version). An
 * empty secret is refused like a missing one: with an empty key anybody could sign requests.
 */
const signingSecrets = new WeakMap<CompiledIntegration, string>();

async function signingSecret(runtime: Runtime, integration: CompiledIntegration, hmac: NonNullable<WebhookOptions['hmac']>): Promise<string> {
  let secret = signingSecrets.get(integration);
  if (secret === undefined) {
    const value = await evaluateTemplate(hmac.secret, bareScope(runtime.env)).catch((err: Error) => {
      runtime.logger?.error({ integration: integration.name, err: err.message }, 'webhook signing secret unavailable');
      return undefined;
    });
    if (typeof value !== 'string' || value === '') {
      throw new WebhookRejection(500, 'the webhook signing secret is not configured on the runner (it is unset or empty)');
    }
    secret = value;
    signingSecrets.set(integration, secret);
  }
  return secret;
}

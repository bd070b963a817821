/**
 * The admin API under /api (PRODUCT §6), behind `Authorization: Bearer <admin token>`.
 * Every error is JSON `{error}`.
 */
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { Hono, type Context } from 'hono';
import type { ExecutionStatus } from '../engine/record.js';
import { BusyError } from '../runtime/dispatcher.js';
import type { Runtime } from '../runtime/runtime.js';
import type { NewExecution } from '../store/types.js';
import { manualTriggerData } from '../triggers/manual.js';
import { connectionAuthorizeRoute } from './oauth.js';
import type { AppEnv } from './types.js';
import { integrationView } from './views.js';

const STATUSES: ExecutionStatus[] = ['queued', 'running', 'succeeded', 'failed'];

export class ApiError extends Error {
  constructor(
    readonly status: 400 | 401 | 404 | 409 | 415 | 429 | 500 | 501 | 503,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export function adminApi(runtime: Runtime, adminToken: string): Hono<AppEnv> {
  const api = new Hono<AppEnv>();
  const expected = digest(adminToken);

  api.use('*', async (c, next) => {
    const m = /^Bearer\s+(.+)$/i.exec(c.req.header('authorization') ?? '');
    if (!m || !timingSafeEqual(digest(m[1]!.trim()), expected)) {
      return c.json({ error: 'missing or wrong admin token: send Authorization: Bearer $HCM_RUNNER_ADMIN_TOKEN' }, 401, { 'www-authenticate': 'Bearer' });
    }
    await next();
  });

  const integrationOr404 = (name: string) => {
    const entry = runtime.registry.entry(name);
    if (!entry) throw new ApiError(404, `no integration named "${name}"`);
    return entry;
  };
  const runnable = (name: string) => {
    const entry = integrationOr404(name);
    if (!entry.integration) throw new ApiError(409, `integration "${name}" has errors and no good version to run; fix ${entry.file} (see GET /api/integrations/${name})`);
    return entry.integration;
  };
  const submit = async (execution: NewExecution) => {
    try {
      await runtime.dispatcher.submit([execution]);
    } catch (err) {
      if (err instanceof BusyError) throw new ApiError(err.shuttingDown ? 503 : 429, err.message, { 'retry-after': String(err.retryAfterSec) });
      throw err;
    }
    return { executionId: execution.id };
  };

  // Integrations -------------------------------------------------------------------------------
  api.get('/integrations', (c) => c.json(runtime.registry.entries().map((e) => integrationView(runtime, e))));

  api.get('/integrations/:name', (c) => {
    const name = c.req.param('name');
    const entry = integrationOr404(name);
    const view = integrationView(runtime, entry);
    for (const provider of runtime.detailProviders) Object.assign(view, provider(name) ?? {});
    view.listening = runtime.isListening(name);
    return c.json(view);
  });

  api.post('/integrations/:name/run', async (c) => {
    const integration = runnable(c.req.param('name'));
    const payload = await jsonBody(c, true);
    const id = randomUUID();
    const trigger = manualTriggerData(integration, payload, { executionId: id, webhookUrls: runtime.webhookUrls(integration.name) });
    const test = c.req.query('test') === 'true';
    return c.json(await submit({ id, integration: integration.name, trigger, test, attempt: 1, queuedAt: new Date().toISOString() }));
  });

  api.post('/integrations/:name/webhook-token/rotate', async (c) => {
    const integration = runnable(c.req.param('name'));
    await runtime.tokens.rotate(integration.name);
    return c.json({ name: integration.name, webhookUrls: runtime.webhookUrls(integration.name) });
  });

  // Listening mode, captures, saved payloads ---------------------------------------------------
  const listen = (on: boolean) => async (c: Context<AppEnv>) => {
    const entry = integrationOr404(c.req.param('name')!);
    await runtime.setListening(entry.name, on);
    return c.json({ name: entry.name, listening: on, testUrl: runtime.webhookUrls(entry.name)?.test });
  };
  api.post('/integrations/:name/listen', listen(true));
  api.delete('/integrations/:name/listen', listen(false));

  api.get('/integrations/:name/captures', async (c) => {
    const entry = integrationOr404(c.req.param('name'));
    return c.json(await runtime.store.listCaptures(entry.name, limitParam(c.req.query('limit'), 50)));
  });

  api.get('/integrations/:name/payloads', async (c) => {
    const entry = integrationOr404(c.req.param('name'));
    return c.json(await runtime.store.listPayloads(entry.name));
  });

  api.post('/integrations/:name/payloads', async (c) => {
    const entry = integrationOr404(c.req.param('name'));
    const body = (await jsonBody(c)) as Record<string, unknown>;
    if (!body || typeof body !== 'object' || typeof body.name !== 'string' || !body.name) {
      throw new ApiError(400, 'send {"name": "...", "captureId": "..."} or {"name", "trigger"} or {"name", "payload"}');
    }
    const trigger = await triggerFrom(entry.name, body);
    const saved = await runtime.store.savePayload(entry.name, body.name, trigger);
    return c.json(saved, 201);
  });

  api.get('/integrations/:name/payloads/:payload', async (c) => {
    const entry = integrationOr404(c.req.param('name'));
    const saved = await runtime.store.getPayload(entry.name, c.req.param('payload'));
    if (!saved) throw new ApiError(404, `no saved payload "${c.req.param('payload')}" for ${entry.name}`);
    return c.json(saved);
  });

  // Configure payload: replace the saved trigger data.
  api.put('/integrations/:name/payloads/:payload', async (c) => {
    const entry = integrationOr404(c.req.param('name'));
    const name = c.req.param('payload');
    if (!(await runtime.store.getPayload(entry.name, name))) throw new ApiError(404, `no saved payload "${name}" for ${entry.name}`);
    const body = (await jsonBody(c)) as Record<string, unknown>;
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw new ApiError(400, 'send {"trigger": {...}} (the whole $trigger) or {"payload": ...} (a JSON body)');
    const trigger = await triggerFrom(entry.name, 'trigger' in body || 'payload' in body || 'captureId' in body ? body : { trigger: body });
    return c.json(await runtime.store.savePayload(entry.name, name, trigger));
  });

  api.delete('/integrations/:name/payloads/:payload', async (c) => {
    const entry = integrationOr404(c.req.param('name'));
    if (!(await runtime.store.deletePayload(entry.name, c.req.param('payload')))) throw new ApiError(404, `no saved payload "${c.req.param('payload')}" for ${entry.name}`);
    return c.json({ deleted: true });
  });

  api.post('/integrations/:name/payloads/:payload/run', async (c) => {
    const integration = runnable(c.req.param('name'));
    const saved = await runtime.store.getPayload(integration.name, c.req.param('payload'));
    if (!saved) throw new ApiError(404, `no saved payload "${c.req.param('payload')}" for ${integration.name}`);
    const id = randomUUID();
    const now = new Date().toISOString();
    return c.json(await submit({ id, integration: integration.name, trigger: withExecution(saved.trigger, id, now), test: true, attempt: 1, queuedAt: now }));
  });

  async function triggerFrom(name: string, body: Record<string, unknown>): Promise<unknown> {
    if (typeof body.captureId === 'string') {
      const capture = await runtime.store.getCapture(name, body.captureId);
      if (!capture) throw new ApiError(404, `no capture "${body.captureId}" for ${name} (GET /api/integrations/${name}/captures lists them)`);
      return capture.trigger;
    }
    if ('trigger' in body) return body.trigger;
    if ('payload' in body) {
      const integration = runnable(name);
      return manualTriggerData(integration, body.payload, { webhookUrls: runtime.webhookUrls(name) });
    }
    throw new ApiError(400, 'send one of captureId, trigger or payload');
  }

  // Executions -----------------------------------------------------------------------------------
  api.get('/executions', async (c) => {
    const status = c.req.query('status');
    if (status !== undefined && !STATUSES.includes(status as ExecutionStatus)) throw new ApiError(400, `status must be one of ${STATUSES.join(', ')}`);
    const integration = c.req.query('integration') || undefined;
    return c.json(await runtime.store.listExecutions({ integration, status: status as ExecutionStatus | undefined, limit: limitParam(c.req.query('limit'), 50) }));
  });

  api.get('/executions/:id', async (c) => {
    const record = await runtime.store.getExecution(c.req.param('id'));
    if (!record) throw new ApiError(404, `no execution "${c.req.param('id')}"`);
    return c.json(record);
  });

  api.post('/executions/:id/replay', async (c) => {
    const record = await runtime.store.getExecution(c.req.param('id'));
    if (!record) throw new ApiError(404, `no execution "${c.req.param('id')}"`);
    runnable(record.integration);
    const id = randomUUID();
    const now = new Date().toISOString();
    return c.json(await submit({ id, integration: record.integration, trigger: withExecution(record.trigger, id), test: record.test, attempt: 1, queuedAt: now }));
  });

  // Reload ---------------------------------------------------------------------------------------
  api.post('/reload', async (c) => {
    const entries = await runtime.reload();
    return c.json(entries.map((e) => integrationView(runtime, e)));
  });

  api.post('/integrations/:name/connections/:connection/authorize', connectionAuthorizeRoute(runtime));

  api.notFound((c) => c.json({ error: `no admin route ${c.req.method} ${c.req.path}` }, 404));
  return api;
}

/** `$trigger.executionId` names the execution that runs; a replayed/saved trigger gets the new one. */
function withExecution(trigger: unknown, id: string, receivedAt?: string): unknown {
  if (!trigger || typeof trigger !== 'object' || Array.isArray(trigger) || !('executionId' in trigger)) return trigger;
  const t: Record<string, unknown> = { ...(trigger as Record<string, unknown>), executionId: id };
  if (receivedAt && 'receivedAt' in t) t.receivedAt = receivedAt;
  return t;
}

async function jsonBody(c: Context<AppEnv>, optional = false): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === '') {
    if (optional) return undefined;
    throw new ApiError(400, 'request body must be JSON');
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ApiError(400, `malformed JSON: ${(err as Error).message}`);
  }
}

function limitParam(v: string | undefined, fallback: number): number {
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new ApiError(400, `limit must be a positive integer, got "${v}"`);
  return Math.min(n, 500);
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

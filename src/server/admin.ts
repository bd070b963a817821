/**
 * The admin API under /api (docs/server.md "Routes"), behind `Authorization: Bearer <admin token>`.
 * Every error is JSON `{error}`.
 */
import { Hono, type Context } from 'hono';
import type { Runtime } from '../runtime/runtime.js';
import { adminTokenMatcher } from './admin-token.js';
import { captureStream, executionStream } from './event-stream.js';
import { HttpError } from '../common/errors.js';
import { MAX_LIST_LIMIT } from '../store/common.js';
import { AdminOperations } from './operations.js';
import type { AppEnv } from './types.js';

export function adminApi(runtime: Runtime, adminToken: string): Hono<AppEnv> {
  const api = new Hono<AppEnv>();
  const isAdminToken = adminTokenMatcher(adminToken);

  api.use('*', async (c, next) => {
    const m = /^Bearer\s+(.+)$/i.exec(c.req.header('authorization') ?? '');
    if (!m || !isAdminToken(m[1]!.trim())) {
      return c.json({ error: 'missing or wrong admin token: send Authorization: Bearer $HCM_RUNNER_ADMIN_TOKEN' }, 401, {
        'www-authenticate': 'Bearer',
      });
    }
    await next();
  });

  const ops = new AdminOperations(runtime);

  // Integrations -------------------------------------------------------------------------------
  api.get('/integrations', (c) => c.json(ops.integrations()));
  api.get('/integrations/:name', (c) => c.json(ops.integration(c.req.param('name'))));

  api.post('/integrations/:name/run', async (c) => {
    const name = c.req.param('name');
    ops.integration(name); // 404 before a body error
    return c.json(await ops.run(name, await jsonBody(c, true), c.req.query('test') === 'true'));
  });

  api.post('/integrations/:name/webhook-token/rotate', async (c) => c.json(await ops.rotateWebhookToken(c.req.param('name'))));

  // Listening mode, captures, saved payloads ---------------------------------------------------
  api.post('/integrations/:name/listen', async (c) => c.json(await ops.setListening(c.req.param('name'), true)));
  api.delete('/integrations/:name/listen', async (c) => c.json(await ops.setListening(c.req.param('name'), false)));

  // Lists never carry whole large requests: summaries, or triggers cut to 64 KiB; one capture in full by id.
  api.get('/integrations/:name/captures', async (c) => {
    const name = c.req.param('name');
    const limit = limitParam(c.req.query('limit'), 50);
    const after = c.req.query('after') || undefined;
    if (c.req.query('summary') === 'true') return c.json(await ops.captureSummaries(name, { limit, after }));
    if (after) throw new HttpError(400, 'after=ID goes with summary=true (GET …/captures/{id} reads one capture)');
    return c.json(await ops.captures(name, limit));
  });
  api.get('/integrations/:name/captures/stream', (c) => captureStream(runtime, c, ops.integration(c.req.param('name')).name));
  api.get('/integrations/:name/captures/:id', async (c) => c.json(await ops.capture(c.req.param('name'), c.req.param('id'))));

  api.get('/integrations/:name/payloads', async (c) => c.json(await ops.payloads(c.req.param('name'))));
  api.post('/integrations/:name/payloads', async (c) => {
    ops.integration(c.req.param('name'));
    return c.json(await ops.savePayload(c.req.param('name'), await jsonBody(c)), 201);
  });
  api.get('/integrations/:name/payloads/:payload', async (c) => c.json(await ops.payload(c.req.param('name'), c.req.param('payload'))));
  api.put('/integrations/:name/payloads/:payload', async (c) => {
    await ops.payload(c.req.param('name'), c.req.param('payload')); // 404 before a body error
    return c.json(await ops.updatePayload(c.req.param('name'), c.req.param('payload'), await jsonBody(c)));
  });
  api.delete('/integrations/:name/payloads/:payload', async (c) => c.json(await ops.deletePayload(c.req.param('name'), c.req.param('payload'))));
  api.post('/integrations/:name/payloads/:payload/run', async (c) => c.json(await ops.runPayload(c.req.param('name'), c.req.param('payload'))));

  // Executions -----------------------------------------------------------------------------------
  api.get('/executions', async (c) =>
    c.json(
      await ops.executions({ integration: c.req.query('integration'), status: c.req.query('status'), limit: limitParam(c.req.query('limit'), 50) }),
    ),
  );
  api.get('/executions/:id', async (c) => c.json(await ops.execution(c.req.param('id'))));
  api.post('/executions/:id/replay', async (c) => c.json(await ops.replay(c.req.param('id'))));

  /** Live execution events (server-sent events); `?integration=` narrows them to one. */
  api.get('/events', (c) => {
    const integration = c.req.query('integration') || undefined;
    if (integration) ops.integration(integration);
    return executionStream(runtime, c, integration);
  });

  // Reload, connections --------------------------------------------------------------------------
  api.post('/reload', async (c) => c.json(await ops.reload()));
  api.get('/connections', async (c) => c.json(await ops.connections()));

  /** Starts an OAuth connection's authorization-code flow → {url, state, redirectUri}. */
  api.post('/integrations/:name/connections/:connection/authorize', async (c) =>
    c.json(await ops.authorize(c.req.param('name'), c.req.param('connection'))),
  );

  api.notFound((c) => c.json({ error: `no admin route ${c.req.method} ${c.req.path}` }, 404));
  return api;
}

async function jsonBody(c: Context<AppEnv>, optional = false): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === '') {
    if (optional) return undefined;
    throw new HttpError(400, 'request body must be JSON');
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new HttpError(400, `malformed JSON: ${(err as Error).message}`);
  }
}

function limitParam(v: string | undefined, fallback: number): number {
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new HttpError(400, `limit must be a positive integer, got "${v}"`);
  return Math.min(n, MAX_LIST_LIMIT);
}

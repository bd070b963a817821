/**
 * The admin API under /api (docs/server.md "Routes"), behind `Authorization: Bearer <admin token>`
 * (hono's `bearerAuth`, with failures slowed per client by the auth throttle). Every error is
 * JSON `{error}`; request bodies are read bounded (src/server/request-body.ts).
 */
import { Hono, type Context } from 'hono';
import { bearerAuth } from 'hono/bearer-auth';
import type { Runtime } from '../runtime/runtime.js';
import { adminTokenMatcher } from './admin-token.js';
import { clientKey } from './auth-throttle.js';
import { captureStream, executionStream } from './event-stream.js';
import { HttpError } from '../common/errors.js';
import { MAX_LIST_LIMIT } from '../store/list-limits.js';
import { refusalOf } from './middleware-check.js';
import { AdminOperations } from './operations.js';
import type { OperatorAuth } from './operator-auth.js';
import { readJson } from './request-body.js';
import type { AppEnv } from './types.js';

const REFUSED = 'missing or wrong admin token: send Authorization: Bearer $HCM_RUNNER_ADMIN_TOKEN';

export function adminApi(runtime: Runtime, auth: OperatorAuth): Hono<AppEnv> {
  const api = new Hono<AppEnv>();
  const isAdminToken = adminTokenMatcher(auth.adminToken);
  const { throttle } = auth;
  // A refusal keeps the API's `{error}` shape; bearerAuth adds its RFC 6750 WWW-Authenticate.
  const refused = () => new Response(JSON.stringify({ error: REFUSED }), { status: 401, headers: { 'content-type': 'application/json' } });
  const wrongToken = (c: Context) => {
    throttle.failed(clientKey(c as Context<AppEnv>), 'admin-api');
    return refused();
  };
  const bearer = bearerAuth({
    // Hashed, constant-time comparison (admin-token.ts), shared with the console's sign-in.
    verifyToken: (token, c) => {
      const ok = isAdminToken(token);
      if (ok) throttle.succeeded(clientKey(c as Context<AppEnv>));
      return ok;
    },
    // No header at all is not a guess (a client not configured yet): refused, not counted.
    noAuthenticationHeader: { message: refused },
    invalidAuthenticationHeader: { message: wrongToken },
    invalidToken: { message: wrongToken },
  });

  api.use('*', async (c, next) => {
    // A locked-out client's token is not compared at all (auth-throttle.ts says why).
    throttle.assertNotLocked(clientKey(c), 'admin-api');
    const refusal = await refusalOf(bearer, c);
    if (refusal) return refusal;
    await next();
  });
  const jsonBody = (c: Context<AppEnv>, optional = false) => readJson(c, auth.maxAdminBodyBytes, runtime.intake, optional);

  const ops = new AdminOperations(runtime);

  // Integrations -------------------------------------------------------------------------------
  api.get('/integrations', (c) => c.json(ops.integrations()));
  api.get('/integrations/:name', async (c) => c.json(await ops.integrationDetail(c.req.param('name'))));

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
      await ops.executions({
        integration: c.req.query('integration'),
        status: c.req.query('status'),
        correlation: c.req.query('correlation'),
        limit: limitParam(c.req.query('limit'), 50),
      }),
    ),
  );
  api.get('/executions/:id', async (c) => c.json(await ops.execution(c.req.param('id'))));
  api.post('/executions/:id/replay', async (c) => c.json(await ops.replay(c.req.param('id'))));
  // Durable execution (docs/server.md "Cancel and retry").
  api.post('/executions/:id/cancel', async (c) => c.json(await ops.cancel(c.req.param('id'))));
  api.post('/executions/:id/retry', async (c) => c.json(await ops.retry(c.req.param('id'), await jsonBody(c, true))));
  api.post('/executions/retry', async (c) => c.json(await ops.retryMatching(await jsonBody(c, true))));

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
    c.json(await ops.authorize(c.req.param('name'), c.req.param('connection'), new URL(c.req.url).origin)),
  );

  // Console sessions -----------------------------------------------------------------------------
  /** Signs every console session out (docs/console.md "Signing in"). */
  api.delete('/console-sessions', async (c) => c.json(await ops.signOutEverywhere()));

  api.notFound((c) => c.json({ error: `no admin route ${c.req.method} ${c.req.path}` }, 404));
  return api;
}

function limitParam(v: string | undefined, fallback: number): number {
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new HttpError(400, `limit must be a positive integer, got "${v}"`);
  return Math.min(n, MAX_LIST_LIMIT);
}

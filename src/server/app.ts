/** The runner's Hono app: webhooks, health, metrics, OAuth callback and the admin API. */
import { Hono } from 'hono';
import { routePath } from 'hono/route';
import { errorResponse, httpErrorOf, StorageUnavailableError } from '../common/errors.js';
import { consoleApp, consoleErrorPage, isConsolePath } from '../console/app.js';
import type { Runtime } from '../runtime/runtime.js';
import { adminApi } from './admin.js';
import { callbackHandler } from './callbacks.js';
import type { Metrics } from './metrics.js';
import { oauthCallback } from './oauth.js';
import { DEFAULT_OPERATOR_AUTH_SETTINGS, operatorAuth, type OperatorAuthSettings } from './operator-auth.js';
import { isOperatorPath, servesPath } from './surfaces.js';
import { publicEdgeHeaders } from './public-response.js';
import type { AppEnv } from './types.js';
import { webhookHandler } from './webhooks.js';

export function createApp(
  runtime: Runtime,
  opts: {
    adminToken: string;
    metrics: Metrics;
    auth?: OperatorAuthSettings;
    /** HCM_RUNNER_TRACE_URL: where the console's execution page links a trace. */
    traceUrl?: string;
  },
): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const { metrics } = opts;
  // One throttle of failed admin tokens for the API and the console's sign-in (auth-throttle.ts).
  const auth = operatorAuth(opts.adminToken, opts.auth ?? DEFAULT_OPERATOR_AUTH_SETTINGS, metrics, runtime.logger);

  app.use('*', async (c, next) => {
    await next();
    const route = c.get('routeLabel') ?? matched(c);
    metrics.requests.inc({ route, method: c.req.method, status: String(c.res.status) });
  });
  // With an admin listener, each listener answers only its own paths (surfaces.ts). The path is
  // the one the router matches, so no spelling of a path reaches a route the filter refused.
  app.use('*', async (c, next) => {
    const surface = c.env?.surface;
    if (surface && !servesPath(surface, c.req.path)) return c.notFound();
    await next();
  });

  // What the internet may reach (surfaces.ts) answers with the public edge's headers (public-response.ts).
  const isEdge = (path: string) => !isOperatorPath(path);
  app.use('*', publicEdgeHeaders(isEdge));

  const webhook = webhookHandler(runtime);
  app.all('/webhooks/*', webhook);
  // core.callback's URLs (docs/server.md "Waiting executions and callbacks").
  app.all('/callbacks/*', callbackHandler(runtime));

  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/metrics', async (c) => c.body(await metrics.render(), 200, { 'content-type': metrics.registry.contentType }));
  app.get('/oauth/callback', oauthCallback(runtime));
  app.route('/api', adminApi(runtime, auth));
  // The web console for people (docs/console.md); it signs in with the same admin token.
  app.get('/', (c) => c.redirect('/console/', 302));
  app.get('/console', (c) => c.redirect('/console/', 302));
  app.route('/', consoleApp(runtime, auth, { traceUrl: opts.traceUrl }));

  app.notFound((c) => c.json({ error: `not found: ${c.req.method} ${c.req.path}` }, 404));
  // The one place errors become HTTP answers, for every route (webhook intake answers its own
  // rejections through the same mapping, src/common/errors.ts): an HttpError (rejections, 429/503
  // backpressure) as it is, an unusable store as 503 + Retry-After (what is wrong, with paths, only
  // on the operator's routes; the log has it either way), anything else as 500.
  app.onError((err, c) => {
    const http = httpErrorOf(err, { detail: isOperatorPath(c.req.path) });
    if (err instanceof StorageUnavailableError) {
      // A corrupt, unreadable or full database: the operator's to fix; clients retry later.
      runtime.logger?.error({ err: err.message, route: matched(c) }, 'request refused: storage unavailable');
    } else if (!http) {
      runtime.logger?.error({ err: err.message, route: matched(c) }, 'request failed');
    }
    if (isConsolePath(c.req.path)) return consoleErrorPage(c, err, http);
    if (!http) return c.json({ error: `internal error: ${err.message}` }, 500);
    const answer = errorResponse(http);
    return c.body(answer.body, answer.status as 400, answer.headers);
  });
  return app;
}

function matched(c: Parameters<typeof routePath>[0]): string {
  try {
    const r = routePath(c, -1);
    return r === '*' || r === '/*' || !r ? 'unmatched' : r;
  } catch {
    return 'unmatched';
  }
}

/**
 * The console under /console/ (mounted at the root, its routes spelled out, because Hono would
 * turn a sub-app's `/` into `/console` without the slash): server-rendered pages (hono/jsx) over the same operations as the
 * admin API (src/server/operations.ts), plain forms for actions, and a small script
 * (assets/console.js) that keeps lists live over server-sent events. docs/console.md describes it.
 */
import { Hono, type Context } from 'hono';
import { csrf } from 'hono/csrf';
import { secureHeaders } from 'hono/secure-headers';
import { HttpError } from '../common/errors.js';
import type { Runtime } from '../runtime/runtime.js';
import { clientKey } from '../server/auth-throttle.js';
import { captureStream, executionStream } from '../server/event-stream.js';
import { refusalOf } from '../server/middleware-check.js';
import { callbackPath } from '../server/oauth.js';
import { AdminOperations, EXECUTION_STATUSES } from '../server/operations.js';
import type { OperatorAuth } from '../server/operator-auth.js';
import { type FormFields, readForm, SIGN_IN_BODY_LIMIT_BYTES } from '../server/request-body.js';
import type { AppEnv } from '../server/types.js';
import { findTriggerType } from '../triggers/registry.js';
import { consoleAssets, FAVICON } from './assets.js';
import { CapturePage } from './pages/capture.js';
import { ConnectionsPage } from './pages/connections.js';
import { ExecutionPage } from './pages/execution.js';
import { ExecutionsPage } from './pages/executions.js';
import { Captures, IntegrationPage, type IntegrationPageProps } from './pages/integration.js';
import { IntegrationsPage } from './pages/integrations.js';
import { Layout } from './pages/layout.js';
import { SignInPage } from './pages/sign-in.js';
import { ConsoleSessions, ownOrigins } from './session.js';

/** Captures an integration's page lists (summaries; each one opens in full on its own page). */
const CONSOLE_CAPTURES = 20;

/** Results of actions, shown after the redirect (fixed texts: a link cannot inject a message). */
const NOTICES: Record<string, string> = {
  'listening-on': 'Listening: requests to the test URL now appear below as they arrive.',
  'listening-off': 'Stopped listening.',
  saved: 'Saved the payload.',
  updated: 'Saved the changes to the payload.',
  deleted: 'Deleted the payload.',
  replayed: 'Replayed: this is the new execution.',
  retried: 'Retried from the failed step: this is the new execution (the steps before it were not run again).',
  cancelled: 'Cancelled.',
  'cancel-requested': 'Cancel requested: the execution stops at its next step boundary.',
};

/** `traceUrl`: HCM_RUNNER_TRACE_URL, where an execution page links its trace (`{traceId}` replaced). */
export function consoleApp(runtime: Runtime, auth: OperatorAuth, opts: { traceUrl?: string } = {}): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const ops = new AdminOperations(runtime);
  const sessions = new ConsoleSessions(auth.adminToken, runtime.store, auth.consoleSessionSeconds * 1000);
  const assets = consoleAssets();
  const { throttle } = auth;
  /** A console form: bounded like every operator body (src/server/request-body.ts). */
  const form = (c: Context<AppEnv>): Promise<FormFields> => readForm(c, auth.maxAdminBodyBytes, runtime.intake);

  app.use(
    '/console/*',
    secureHeaders({
      contentSecurityPolicy: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'", "'unsafe-inline'"],
        imgSrc: ["'self'", 'data:'],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
      },
      referrerPolicy: 'no-referrer',
      xFrameOptions: 'DENY',
      // HSTS is for whoever terminates TLS in front of the runner (it would bind the whole host).
      strictTransportSecurity: false,
    }),
  );
  app.use('/console/*', async (c, next) => {
    await next();
    if (!c.res.headers.has('cache-control')) c.header('cache-control', 'no-store');
  });

  // Assets carry nothing secret: served before sign-in (the sign-in page uses them too).
  app.get('/console/assets/:file', (c) => {
    const asset = assets.get(c.req.param('file'));
    if (!asset) return c.text('not found', 404);
    return c.body(asset.body, 200, { 'content-type': asset.type, 'cache-control': 'no-cache' });
  });

  app.get('/favicon.ico', (c) => c.body(FAVICON, 200, { 'content-type': 'image/x-icon', 'cache-control': 'public, max-age=86400' }));

  // CSRF: every state-changing request must come from the console's own pages — hono's csrf:
  // `Sec-Fetch-Site: same-origin`, or else an `Origin` that is one of the console's own; a form
  // post with neither is refused too (a signed-in browser always sends one of them).
  const sameOrigin = csrf({ origin: (origin, c) => ownOrigins(c, runtime.publicUrl).has(origin) });
  app.use('/console/*', async (c, next) => {
    if (await refusalOf(sameOrigin, c)) {
      return c.html(
        page('Refused', 'This request did not come from the console’s own pages, so it was refused (cross-site request protection).'),
        403,
      );
    }
    await next();
  });

  app.get('/console/sign-in', (c) => c.html(<SignInPage next={safeNext(c.req.query('next'))} />));
  app.post('/console/sign-in', async (c) => {
    // Unauthenticated: a locked-out client is refused before its body is read, and the body is
    // a few KiB at most (413 past it, before parsing).
    const client = clientKey(c);
    throttle.assertNotLocked(client, 'sign-in');
    const fields = await readForm(c, SIGN_IN_BODY_LIMIT_BYTES, runtime.intake, 'the sign-in form');
    const next = safeNext(fields.next ?? '');
    if (typeof fields.token !== 'string' || !sessions.tokenMatches(fields.token)) {
      throttle.failed(client, 'sign-in');
      return c.html(<SignInPage next={next} wrong />, 401);
    }
    throttle.succeeded(client);
    await sessions.signIn(c);
    return c.redirect(next, 303);
  });
  app.post('/console/sign-out', async (c) => {
    await sessions.signOut(c);
    return c.redirect('/console/sign-in', 303);
  });

  // Everything below needs a session.
  app.use('/console/*', async (c, next) => {
    if (await sessions.isSignedIn(c)) return next();
    if (c.req.method === 'GET' && c.req.header('accept')?.includes('text/event-stream')) return c.text('sign in first', 401);
    if (c.req.method === 'GET')
      return c.redirect(`/console/sign-in?next=${encodeURIComponent(new URL(c.req.url).pathname + new URL(c.req.url).search)}`, 303);
    return c.redirect('/console/sign-in', 303);
  });

  // Live streams (the same as GET /api/events and …/captures/stream) ---------------------------
  app.get('/console/events', (c) => {
    const integration = c.req.query('integration') || undefined;
    if (integration) ops.integration(integration);
    return executionStream(runtime, c, integration);
  });
  app.get('/console/integrations/:name/captures/stream', (c) => captureStream(runtime, c, ops.integration(c.req.param('name')).name));

  // Integrations ---------------------------------------------------------------------------------
  app.get('/console/', async (c) => {
    const views = ops.integrations().map((v) => ops.integration(v.name));
    // One query for every integration's last execution, however many there are.
    const [latest, health] = await Promise.all([ops.latestExecutions(views.map((v) => v.name)), ops.healthOf(views.map((v) => v.name))]);
    return c.html(<IntegrationsPage rows={views.map((view) => ({ view, last: latest.get(view.name), health: health.get(view.name) }))} />);
  });

  const integrationPage = async (
    c: Context<AppEnv>,
    name: string,
    extra: Partial<IntegrationPageProps> = {},
    status: 200 | 400 | 404 | 409 | 429 | 503 = 200,
  ) => {
    const view = await ops.integrationDetail(name);
    const webhookLike = !!findTriggerType(view.trigger.type)?.webhook;
    // Captures as summaries: the page costs the same however large the captured requests were.
    const [executions, captures, payloads] = await Promise.all([
      ops.executions({ integration: view.name, limit: 10 }),
      webhookLike ? ops.captureSummaries(view.name, { limit: CONSOLE_CAPTURES }) : [],
      ops.payloads(view.name),
    ]);
    return c.html(
      <IntegrationPage
        view={view}
        executions={executions}
        captures={captures}
        payloads={payloads}
        notice={NOTICES[c.req.query('done') ?? '']}
        {...extra}
      />,
      status,
    );
  };
  const integrationUrl = (name: string, done?: string, hash = '') =>
    `/console/integrations/${encodeURIComponent(name)}${done ? `?done=${done}` : ''}${hash}`;
  const executionUrl = (id: string, done?: string) => `/console/executions/${encodeURIComponent(id)}${done ? `?done=${done}` : ''}`;

  app.get('/console/integrations/:name', (c) => integrationPage(c, c.req.param('name')));
  // The pages answered to a failed form post are shown at the post's URL (the script then shows
  // the integration's own URL); reading one of those URLs again lands on the integration's page.
  app.get('/console/integrations/:name/run', (c) => c.redirect(integrationUrl(ops.integration(c.req.param('name')).name), 303));
  app.get('/console/integrations/:name/payloads/:payload', (c) =>
    c.redirect(integrationUrl(ops.integration(c.req.param('name')).name, undefined, '#payloads-h'), 303),
  );

  // Captures: the live list alone (what the page's script re-reads on each capture), and one capture in full.
  app.get('/console/integrations/:name/captures', async (c) => {
    const view = ops.integration(c.req.param('name'));
    const captures = await ops.captureSummaries(view.name, { limit: CONSOLE_CAPTURES });
    return c.html(<Captures base={integrationUrl(view.name)} captures={captures} listening={!!view.listening} />);
  });
  app.get('/console/integrations/:name/captures/:id', async (c) => {
    const view = ops.integration(c.req.param('name'));
    return c.html(<CapturePage integration={view.name} capture={await ops.capture(view.name, c.req.param('id'))} />);
  });

  app.post('/console/integrations/:name/run', async (c) => {
    const name = c.req.param('name');
    const text = (await form(c)).payload ?? '';
    let payload: unknown;
    try {
      payload = text.trim() === '' ? undefined : JSON.parse(text);
    } catch (err) {
      return integrationPage(c, name, { runPayload: text, error: `The payload is not valid JSON: ${(err as Error).message}` }, 400);
    }
    try {
      const { executionId } = await ops.run(name, payload, true);
      return c.redirect(executionUrl(executionId), 303);
    } catch (err) {
      if (!(err instanceof HttpError) || err.status === 404) throw err;
      return integrationPage(c, name, { runPayload: text, error: err.message }, err.status as 409);
    }
  });

  app.post('/console/integrations/:name/listen', async (c) => {
    const on = (await form(c)).on === 'true';
    const { name } = await ops.setListening(c.req.param('name'), on);
    return c.redirect(integrationUrl(name, on ? 'listening-on' : 'listening-off', '#listening-h'), 303);
  });

  app.post('/console/integrations/:name/payloads', async (c) => {
    const fields = await form(c);
    const name = c.req.param('name');
    try {
      const saved = await ops.savePayload(name, { name: (fields.name ?? '').trim(), captureId: fields.captureId ?? '' });
      return c.redirect(integrationUrl(saved.integration, 'saved', '#payloads-h'), 303);
    } catch (err) {
      // A refused name or a capture stored cut: said on the integration's page, next to the form.
      if (!(err instanceof HttpError) || (err.status !== 400 && err.status !== 409)) throw err;
      return integrationPage(c, name, { error: `Nothing was saved: ${err.message}` }, err.status);
    }
  });

  app.post('/console/integrations/:name/payloads/:payload', async (c) => {
    const name = c.req.param('name');
    const text = (await form(c)).trigger ?? '';
    let trigger: unknown;
    try {
      trigger = JSON.parse(text);
    } catch (err) {
      return integrationPage(
        c,
        name,
        { error: `The trigger data of "${c.req.param('payload')}" is not valid JSON: ${(err as Error).message}; nothing was saved.` },
        400,
      );
    }
    await ops.updatePayload(name, c.req.param('payload'), { trigger });
    return c.redirect(integrationUrl(name, 'updated', '#payloads-h'), 303);
  });

  app.post('/console/integrations/:name/payloads/:payload/delete', async (c) => {
    await ops.deletePayload(c.req.param('name'), c.req.param('payload'));
    return c.redirect(integrationUrl(c.req.param('name'), 'deleted', '#payloads-h'), 303);
  });

  app.post('/console/integrations/:name/payloads/:payload/run', async (c) => {
    const { executionId } = await ops.runPayload(c.req.param('name'), c.req.param('payload'));
    return c.redirect(executionUrl(executionId), 303);
  });

  // Executions -----------------------------------------------------------------------------------
  app.get('/console/executions', async (c) => {
    const integration = c.req.query('integration') || undefined;
    const status = c.req.query('status') || undefined;
    const correlation = c.req.query('correlation')?.trim() || undefined;
    const names = ops.integrations().map((v) => v.name);
    let executions: Awaited<ReturnType<typeof ops.executions>> = [];
    let error: string | undefined;
    try {
      executions = await ops.executions({ integration, status, correlation, limit: 100 });
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      error = err.message;
    }
    return c.html(
      <ExecutionsPage
        executions={executions}
        integrations={names}
        statuses={EXECUTION_STATUSES}
        integration={integration}
        status={status}
        correlation={correlation}
        notice={bulkNotice(c.req.query('retried'), !!c.req.query('retryUntil'), c.req.query('alreadyRetried'))}
        retryUntil={c.req.query('retryUntil') || undefined}
        retryStatus={c.req.query('retryStatus') || undefined}
        error={error}
      />,
    );
  });

  // Bulk retry: the new executions show in the list (the same integration filter, every status).
  app.post('/console/executions/retry', async (c) => {
    const fields = await form(c);
    const filter = { integration: fields.integration || undefined, status: fields.status || undefined, until: fields.until || undefined };
    const done = await ops.retryMatching(filter);
    const q = new URLSearchParams();
    if (filter.integration) q.set('integration', filter.integration);
    q.set('retried', String(done.executionIds.length));
    if (done.alreadyRetried?.length) q.set('alreadyRetried', String(done.alreadyRetried.length));
    if (done.more && done.until) {
      q.set('retryUntil', done.until);
      q.set('retryStatus', filter.status ?? 'failed');
    }
    return c.redirect(`/console/executions?${q}`, 303);
  });

  const executionPage = async (c: Context<AppEnv>, id: string, error?: string, status: 200 | 409 = 200) => {
    const record = await ops.execution(id);
    // A queued execution behind its concurrency key: how many are ahead of it.
    const ahead = await ops.aheadInLine(record);
    return c.html(
      <ExecutionPage
        record={record}
        ahead={ahead}
        retries={await ops.retriesOf(id)}
        notice={NOTICES[c.req.query('done') ?? '']}
        error={error}
        traceUrl={opts.traceUrl}
      />,
      status,
    );
  };
  app.get('/console/executions/:id', (c) => executionPage(c, c.req.param('id')));
  // Pages answered to a refused action are shown at the post's URL; reading it again lands on the execution.
  for (const action of ['cancel', 'retry', 'replay'])
    app.get(`/console/executions/:id/${action}`, (c) => c.redirect(executionUrl(c.req.param('id')), 303));

  app.post('/console/executions/:id/replay', async (c) => {
    const { executionId } = await ops.replay(c.req.param('id'));
    return c.redirect(executionUrl(executionId, 'replayed'), 303);
  });

  app.post('/console/executions/:id/retry', async (c) => {
    const id = c.req.param('id');
    try {
      // The confirmed button of an execution retried before sends again=true.
      const again = (await form(c)).again === 'true';
      const { executionId } = await ops.retry(id, again ? { again } : undefined);
      return c.redirect(executionUrl(executionId, 'retried'), 303);
    } catch (err) {
      // Not retryable (status, integration gone): said on the execution's page.
      if (!(err instanceof HttpError) || err.status !== 409) throw err;
      return executionPage(c, id, `Not retried: ${err.message}`, 409);
    }
  });

  app.post('/console/executions/:id/cancel', async (c) => {
    const id = c.req.param('id');
    try {
      const record = await ops.cancel(id);
      return c.redirect(executionUrl(id, record.status === 'cancelled' ? 'cancelled' : 'cancel-requested'), 303);
    } catch (err) {
      // Finished in the meantime: said on its page.
      if (!(err instanceof HttpError) || err.status !== 409) throw err;
      return executionPage(c, id, `Not cancelled: ${err.message}`, 409);
    }
  });

  // Connections ----------------------------------------------------------------------------------
  app.get('/console/connections', async (c) => c.html(<ConnectionsPage connections={await ops.connections()} callbackUrl={callbackPath(runtime)} />));

  app.post('/console/connections/:integration/:connection/connect', async (c) => {
    try {
      const { url } = await ops.authorize(c.req.param('integration'), c.req.param('connection'), new URL(c.req.url).origin);
      return c.redirect(url, 303);
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      return c.html(
        <ConnectionsPage connections={await ops.connections()} callbackUrl={callbackPath(runtime)} error={err.message} />,
        err.status as 400,
      );
    }
  });

  // Last: anything else under /console (a sub-app's notFound is not used once mounted).
  app.all('/console/*', (c) => c.html(page('Not found', `Nothing at ${c.req.path}.`), 404));
  // Errors are answered by the app's one error handler (src/server/app.ts), through consoleErrorPage.
  return app;
}

/** Whether a request belongs to the console (its errors are pages, not JSON). */
export function isConsolePath(path: string): boolean {
  return path === '/console' || path.startsWith('/console/');
}

/** The console's page for a failed request: `http` when the error has an HTTP answer, else a 500. */
export function consoleErrorPage(c: Context<AppEnv>, err: Error, http: HttpError | undefined): Response | Promise<Response> {
  if (http)
    return c.html(page(http.status === 429 || http.status === 503 ? 'Try again later' : 'Cannot do that', http.message), http.status, http.headers);
  return c.html(page('Something went wrong', `Internal error: ${err.message}`), 500);
}

/** The notice after a bulk retry: counts (digits only, so a link cannot inject a message). */
function bulkNotice(retried: string | undefined, more: boolean, alreadyRetried?: string): string | undefined {
  if (retried === undefined || !/^\d{1,4}$/.test(retried)) return undefined;
  const n = Number(retried);
  const skipped = alreadyRetried !== undefined && /^\d{1,4}$/.test(alreadyRetried) ? Number(alreadyRetried) : 0;
  const what =
    n === 0
      ? skipped === 0
        ? 'No execution matched: nothing was retried.'
        : 'Nothing was retried.'
      : `Retried ${n} execution${n === 1 ? '' : 's'} from the failed step; the new ones are below.`;
  const already =
    skipped === 0
      ? ''
      : ` ${skipped} already retried execution${skipped === 1 ? ' was' : 's were'} skipped (retry those from their page, or retry their failed retries).`;
  return more ? `${what}${already} More match: press the button again to retry the next (older) ones.` : `${what}${already}`;
}

/** A redirect target after sign-in: only a console path (never another site). */
function safeNext(next: string | undefined): string {
  return next?.startsWith('/console/') && !next.startsWith('//') && !next.includes('\\') ? next : '/console/';
}

function page(title: string, message: string) {
  return (
    <Layout title={title}>
      <h1>{title}</h1>
      <p class="error" role="alert">
        {message}
      </p>
      <p>
        <a href="/console/">Back to the integrations</a>
      </p>
    </Layout>
  );
}

/**
 * `hcm-runner serve [--dir DIR] [--port N] [--host H] [--admin-port N] [--admin-host H] [--data DIR] [--database-url URL] [--sandbox]`
 * — the long-running runtime (docs/server.md). SIGTERM/SIGINT shut down gracefully, SIGHUP reloads;
 * started by `npm start`, it also shuts down when npm goes (parent-watch.ts).
 */
import { isAbsolute, relative, resolve } from 'node:path';
import type { Sandbox } from '../sandbox/index.js';
import { openStore } from '../store/open.js';
import { startServer } from '../server/index.js';
import { acceptsWebhooks } from '../triggers/registry.js';
import { missingEnvProblems } from '../runtime/missing-env.js';
import { parseHeaderList } from '../triggers/webhook/limits.js';
import { intFlag, parse, UsageError } from './args.js';
import { forgetPreviousSandboxTokens, startLocalSandbox } from './local-sandbox.js';
import { watchParent } from './parent-watch.js';

export const serveUsage = `Usage: hcm-runner serve [--dir DIR] [--port N] [--host H] [--admin-port N] [--admin-host H]
                        [--data DIR] [--database-url URL] [--sandbox]

Runs the runtime: webhook URLs, schedules and polls, the admin API, health and metrics.
  --dir DIR               integrations folder (default ./integrations)
  --port N                port (default $PORT or 8080)
  --host H                interface to listen on (default 127.0.0.1; 0.0.0.0 for all)
  --admin-port N          serve the console, /api and /metrics on their own port (default
                          $HCM_RUNNER_ADMIN_PORT; unset: everything on --port); the main port then
                          serves only webhooks, callbacks, the OAuth callback and /healthz — the
                          production layout, docs/security.md
  --admin-host H          interface of the admin port (default $HCM_RUNNER_ADMIN_HOST or
                          127.0.0.1; e.g. a VPN or private address)
  --data DIR              data directory (default ./data): the SQLite store, the stored admin
                          token (admin-token) and, without HCM_RUNNER_SECRET, secret.key
  --database-url URL      postgres://… selects PostgreSQL (default $DATABASE_URL); several
                          replicas on one database share the work (docs/scaling.md);
                          ?schema=NAME in the URL picks the PostgreSQL schema (default public)
  --sandbox               also start the built-in HCM sandbox (port 8090, or a free one) and
                          point HCM_API_URL, HCM_TOKEN_URL, HCM_AUTHORIZE_URL, HCM_CLIENT_ID,
                          HCM_CLIENT_SECRET, HCM_REFRESH_TOKEN and HCM_TENANT at it
  --concurrency N         executions running at once (default $HCM_RUNNER_CONCURRENCY or 16)
  --integration-concurrency N
                          executions of one integration at once (default 4)
  --backlog N             queued executions before webhooks get 429 (default 1000)
  --integration-backlog N queued executions of one integration before its webhooks get 429
                          (default $HCM_RUNNER_INTEGRATION_BACKLOG or half the backlog)
  --max-interruptions N   times the process may stop under one execution before it is failed
                          instead of resumed (default $HCM_RUNNER_MAX_INTERRUPTIONS or 3)
  --max-result-bytes N    largest HTTP response body a step may read (default
                          $HCM_RUNNER_MAX_RESULT_BYTES or 16777216)
  --retention-days N      days finished executions are kept (default 14; 0 = forever)
  --allow-private-network let core.http call private and loopback addresses (10/8, 172.16/12,
                          192.168/16, 127/8, ::1 …; default $HCM_RUNNER_ALLOW_PRIVATE_NETWORK,
                          on with --sandbox); link-local and cloud metadata addresses stay refused
  --max-form-parts N      parts of one multipart webhook body, or fields of one urlencoded
                          form body, before 413 (default $HCM_RUNNER_MAX_FORM_PARTS or 1000)
  --redact-headers LIST   comma-separated caller headers redacted in $trigger.headers, added to
                          authorization, cookie, x-api-key … (default $HCM_RUNNER_REDACT_HEADERS)
Environment: HCM_RUNNER_ADMIN_TOKEN (admin API bearer token; when unset, one is created once into
DIR/admin-token of --data, mode 0600, and reused), HCM_RUNNER_LOG_FORMAT (json or pretty; default
pretty when stdout is a terminal),
HCM_RUNNER_SECRET, HCM_RUNNER_PUBLIC_URL, HCM_RUNNER_LOG_LEVEL, HCM_RUNNER_SHUTDOWN_GRACE_MS;
HCM_RUNNER_AUTH_MAX_FAILURES (wrong admin tokens from one client before 429; default 10),
HCM_RUNNER_AUTH_MAX_LOCKOUT_SECONDS (longest such lockout; default 60),
HCM_RUNNER_CONSOLE_SESSION_SECONDS (console session lifetime; default 43200),
HCM_RUNNER_MAX_ADMIN_BODY_BYTES (admin API JSON bodies and console forms; default 1048576);
OTEL_EXPORTER_OTLP_ENDPOINT and the other standard OTEL_* variables (OpenTelemetry tracing over
OTLP/HTTP; docs/operations.md), HCM_RUNNER_TRACE_URL (the console's link to a trace, with {traceId});
on PostgreSQL also HCM_RUNNER_REPLICA_ID (named in every log line) and HCM_RUNNER_LEASE_SECONDS
(how long a silent replica keeps its running executions before another takes them; default 60).`;

export async function serveCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    {
      dir: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      'admin-port': { type: 'string' },
      'admin-host': { type: 'string' },
      data: { type: 'string' },
      'database-url': { type: 'string' },
      sandbox: { type: 'boolean' },
      concurrency: { type: 'string' },
      'integration-concurrency': { type: 'string' },
      backlog: { type: 'string' },
      'integration-backlog': { type: 'string' },
      'max-interruptions': { type: 'string' },
      'max-result-bytes': { type: 'string' },
      'retention-days': { type: 'string' },
      'allow-private-network': { type: 'boolean' },
      'max-form-parts': { type: 'string' },
      'redact-headers': { type: 'string' },
    },
    serveUsage,
  );
  if (values.help) {
    process.stdout.write(`${serveUsage}\n`);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"\n\n${serveUsage}`);
  const env = process.env;
  const port = intFlag((values.port as string | undefined) ?? env.PORT, 'port', 8080);
  if (port > 65535) throw new UsageError(`--port must be at most 65535, got ${port}`);
  const adminPortValue = (values['admin-port'] as string | undefined) ?? (env.HCM_RUNNER_ADMIN_PORT || undefined);
  const adminPort = adminPortValue === undefined ? undefined : intFlag(adminPortValue, 'admin-port', 0);
  if (adminPort !== undefined && adminPort > 65535) throw new UsageError(`--admin-port must be at most 65535, got ${adminPort}`);
  if (adminPort !== undefined && adminPort !== 0 && adminPort === port)
    throw new UsageError(`--admin-port must differ from --port (both ${port}): the console and the public edge never share an origin`);
  const adminHost = (values['admin-host'] as string | undefined) ?? (env.HCM_RUNNER_ADMIN_HOST || undefined);
  if (adminHost !== undefined && adminPort === undefined) throw new UsageError('--admin-host needs --admin-port (or HCM_RUNNER_ADMIN_PORT)');
  const limits = {
    concurrency: intFlag((values.concurrency as string | undefined) ?? env.HCM_RUNNER_CONCURRENCY, 'concurrency', 16) || 1,
    perIntegration:
      intFlag((values['integration-concurrency'] as string | undefined) ?? env.HCM_RUNNER_INTEGRATION_CONCURRENCY, 'integration-concurrency', 4) || 1,
    backlog: intFlag((values.backlog as string | undefined) ?? env.HCM_RUNNER_BACKLOG, 'backlog', 1000),
    // Unset: the dispatcher reads HCM_RUNNER_INTEGRATION_BACKLOG / HCM_RUNNER_MAX_INTERRUPTIONS.
    ...(values['integration-backlog'] === undefined
      ? {}
      : { backlogPerIntegration: intFlag(values['integration-backlog'] as string, 'integration-backlog', 500) || 1 }),
    ...(values['max-interruptions'] === undefined
      ? {}
      : { maxInterruptions: intFlag(values['max-interruptions'] as string, 'max-interruptions', 3) || 1 }),
  };
  if (values['max-result-bytes'] !== undefined)
    env.HCM_RUNNER_MAX_RESULT_BYTES = String(intFlag(values['max-result-bytes'] as string, 'max-result-bytes', 16 * 1024 * 1024) || 1);
  const retentionDays = intFlag((values['retention-days'] as string | undefined) ?? env.HCM_RUNNER_RETENTION_DAYS, 'retention-days', 14);
  const graceMs = intFlag(env.HCM_RUNNER_SHUTDOWN_GRACE_MS, 'HCM_RUNNER_SHUTDOWN_GRACE_MS', 10_000);

  let sandbox: Sandbox | undefined;
  if (values.sandbox) {
    sandbox = await startLocalSandbox(env);
    process.stderr.write(`HCM sandbox on ${sandbox.url} (HCM_API_URL=${sandbox.apiUrl})\n`);
  }

  const dataDir = (values.data as string | undefined) ?? 'data';
  const databaseUrl = (values['database-url'] as string | undefined) ?? env.DATABASE_URL;
  let server;
  try {
    // With the sandbox, the store is opened here first: tokens of a previous sandbox must be gone
    // before recovery, polls or webhooks use them.
    const store = sandbox ? await openStore({ dataDir: resolve(dataDir), databaseUrl }) : undefined;
    if (store)
      await forgetPreviousSandboxTokens(store.tokens, env).catch(async (err) => {
        await store.close();
        throw err;
      });
    server = await startServer({
      dir: (values.dir as string | undefined) ?? 'integrations',
      port,
      host: (values.host as string | undefined) ?? '127.0.0.1',
      adminPort,
      adminHost,
      dataDir,
      databaseUrl,
      store,
      limits,
      retentionDays,
      shutdownGraceMs: graceMs,
      env,
      // Unset flags fall back to the environment (startServer reads it).
      allowPrivateNetwork: values['allow-private-network'] || values.sandbox ? true : undefined,
      maxFormParts: values['max-form-parts'] === undefined ? undefined : intFlag(values['max-form-parts'] as string, 'max-form-parts', 1000) || 1,
      redactHeaders: values['redact-headers'] === undefined ? undefined : parseHeaderList(values['redact-headers'] as string),
    });
  } catch (err) {
    await sandbox?.close();
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'EADDRINUSE') {
      const admin = adminPort !== undefined && (e as { port?: number }).port === adminPort;
      process.stderr.write(
        `hcm-runner serve: port ${admin ? adminPort : port} is already in use; pick another with ${admin ? '--admin-port' : '--port'} N\n`,
      );
      return 1;
    }
    throw err;
  }
  printBanner(server);

  return new Promise<number>((done) => {
    let stopping = false;
    const stop = (signal: string, why = `${signal} received`) => {
      if (stopping) {
        process.stderr.write(`hcm-runner: ${signal} again, exiting now\n`);
        process.exit(1);
      }
      stopping = true;
      unwatchParent();
      process.stderr.write(`hcm-runner: ${why}, shutting down (up to ${graceMs} ms for running executions)\n`);
      void server
        .close(graceMs)
        .then(() => sandbox?.close())
        .then(
          () => finish(0),
          (err) => {
            process.stderr.write(`hcm-runner: shutdown failed: ${(err as Error).message}\n`);
            finish(1);
          },
        );
    };
    const finish = (code: number) => {
      process.off('SIGTERM', onTerm).off('SIGINT', onInt).off('SIGHUP', onHup);
      // Should a stray handle keep the loop alive, exit anyway (unref: never delays a clean exit).
      setTimeout(() => process.exit(code), 3000).unref();
      done(code);
    };
    const onTerm = () => stop('SIGTERM');
    const onInt = () => stop('SIGINT');
    const onHup = () => {
      void server.runtime.reload().then(
        (entries) =>
          process.stderr.write(`hcm-runner: reloaded ${entries.length} file(s); ${entries.filter((e) => e.problems.length).length} with problems\n`),
        (err) => process.stderr.write(`hcm-runner: reload failed: ${(err as Error).message}\n`),
      );
    };
    process.on('SIGTERM', onTerm).on('SIGINT', onInt).on('SIGHUP', onHup);
    const unwatchParent = watchParent(() => stop('SIGTERM', 'the npm process that started the server is gone'));
  });
}

/**
 * How to get at the admin token. A stored token is shown when it was just created (the one time
 * it must be) and on a terminal; in a log it is referred to by its file instead.
 */
function adminTokenLines(server: Awaited<ReturnType<typeof startServer>>): string[] {
  if (!server.adminTokenFile) return ['admin token: HCM_RUNNER_ADMIN_TOKEN'];
  const file = shownPath(server.adminTokenFile);
  const show = server.adminTokenGenerated || process.stderr.isTTY;
  return [
    `admin token: ${server.adminTokenGenerated ? 'created and ' : ''}stored in ${file} (mode 0600, kept across restarts); CLI commands run here read it from there`,
    `  for curl, the console or another directory: export HCM_RUNNER_ADMIN_TOKEN=${show ? server.adminToken : `$(cat ${file})`}`,
  ];
}

/** A path as the user typed it would look: relative when below the working directory. */
function shownPath(abs: string): string {
  const rel = relative(process.cwd(), abs);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : abs;
}

function printBanner(server: Awaited<ReturnType<typeof startServer>>): void {
  const lines = [`hcm-runner listening on ${server.url}${server.publicUrl !== server.url ? ` (public URL ${server.publicUrl})` : ''}`];
  if (server.adminPort !== undefined)
    lines.push(
      `admin (console, /api, /metrics) on ${server.adminUrl}; the main port serves only webhooks, callbacks, the OAuth callback and /healthz`,
    );
  if (server.runtime.registry.entries().length === 0) lines.push(`no integration files (*.yaml, *.yml) found in ${server.runtime.registry.dir}`);
  lines.push(`console: ${server.adminUrl}/console/`, ...adminTokenLines(server));
  for (const e of server.runtime.registry.entries()) {
    const problems = e.problems.length ? e.problems : e.integration ? missingEnvProblems(e.integration, server.runtime.env) : [];
    const running = e.problems.length ? ', last good version running' : '';
    const status = problems.length ? `error (${problems.length} problem${problems.length > 1 ? 's' : ''}${e.integration ? running : ''})` : 'ok';
    lines.push(
      `  ${e.name} [${e.integration?.trigger.type ?? e.header?.triggerType ?? '?'}] ${status}${e.integration && !e.integration.enabled ? ' (disabled)' : ''}`,
    );
    for (const p of problems) lines.push(`    ${p.file}:${p.line}:${p.column}: error: ${p.message}`);
    const urls = acceptsWebhooks(e.integration) ? server.runtime.webhookUrls(e.name) : undefined;
    if (urls) lines.push(`    live: ${urls.live}`, `    test: ${urls.test}`);
  }
  process.stderr.write(`${lines.join('\n')}\n`);
}

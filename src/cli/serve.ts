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
import { flagOptions } from '../settings/resolve.js';
import { renderServeHelp } from '../settings/help.js';
import { resolveServeSettings, serveSettingKeys } from '../settings/serve.js';
import { parse, UsageError } from './args.js';
import { forgetPreviousSandboxTokens, startLocalSandbox } from './local-sandbox.js';
import { watchParent } from './parent-watch.js';

/** `serve --help`: rendered from the settings spec (src/settings/spec.ts), like docs/server.md's table. */
export const serveUsage = renderServeHelp();

export async function serveCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, flagOptions(serveSettingKeys), serveUsage);
  if (values.help) {
    process.stdout.write(`${serveUsage}\n`);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"\n\n${serveUsage}`);
  // Every setting, once: flags over the environment over the defaults (src/settings/).
  const settings = resolveServeSettings({ flags: values, env: process.env });
  const { port, adminPort, adminHost, dataDir, databaseUrl } = settings;
  const graceMs = settings.shutdownGraceMs;

  let sandbox: Sandbox | undefined;
  // What integrations' `{env: NAME}` values read: the process's environment, with --sandbox's
  // HCM_* variables on top (process.env itself is never written).
  let env = process.env;
  if (settings.sandbox) {
    ({ sandbox, env } = await startLocalSandbox(process.env));
    process.stderr.write(`HCM sandbox on ${sandbox.url} (HCM_API_URL=${sandbox.apiUrl})\n`);
  }

  let server;
  try {
    // With the sandbox, the store is opened here first: tokens of a previous sandbox must be gone
    // before recovery, polls or webhooks use them.
    const store = sandbox ? await openStore({ dataDir: resolve(dataDir), databaseUrl, secret: settings.secret }) : undefined;
    if (store)
      await forgetPreviousSandboxTokens(store.tokens, env).catch(async (err) => {
        await store.close();
        throw err;
      });
    server = await startServer({
      dir: settings.dir,
      port,
      host: settings.host,
      adminPort,
      adminHost,
      dataDir,
      databaseUrl,
      store,
      settings,
      env,
      // --sandbox is local development against local services (docs/server.md "Outbound policy").
      allowPrivateNetwork: settings.allowPrivateNetwork || settings.sandbox,
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
  if (!server.adminTokenFile) return ['admin token: HCM_RUNNER_ADMIN_TOKEN (or its _FILE)'];
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

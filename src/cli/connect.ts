/**
 * `hcm-runner connect <integration> <connection>`: the OAuth 2.0 authorization-code flow.
 * Prints the authorize URL, waits for the redirect on `{public}/oauth/callback`, exchanges the
 * code and stores the tokens (encrypted) in the data directory. When `serve` is already running
 * at the public URL, its own callback route finishes the flow instead.
 */
import { createServer } from 'node:http';
import { request } from 'undici';
import { completeAuthorization, startAuthorization } from '../connectors/hcm/oauth/index.js';
import { resolveConnectionOutsideRun } from '../engine/connections.js';
import { parse, intFlag, UsageError } from './args.js';
import { AdminClient } from './admin-client.js';
import { findIntegration } from './find-integration.js';
import { localServices } from './services.js';

export const connectUsage = `Usage: hcm-runner connect <integration> <connection> [--dir DIR] [--data DIR] [--timeout SEC]

Authorizes an hcm-oauth2 connection with the authorization-code flow (PKCE). Open the printed
URL, approve, and the browser returns to {public}/oauth/callback, where this command (or a running
'hcm-runner serve') exchanges the code and stores the tokens encrypted in the data directory.
  <integration>   the integration's name (looked up in --dir) or its file
  --dir DIR       integrations folder (default ./integrations)
  --data DIR      data directory (default ./data)
  --timeout SEC   how long to wait for the redirect (default 600)
The redirect URL is HCM_RUNNER_PUBLIC_URL (default http://127.0.0.1:8080) + /oauth/callback;
register it with the API client. When 'hcm-runner serve' answers there, the command asks it
for the authorize URL (admin API: HCM_RUNNER_ADMIN_TOKEN, else the token stored in --data) and
the server stores the tokens.`;

export async function connectCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    { dir: { type: 'string', default: 'integrations' }, data: { type: 'string', default: 'data' }, timeout: { type: 'string' } },
    connectUsage,
  );
  if (values.help) {
    process.stdout.write(`${connectUsage}\n`);
    return 0;
  }
  if (positionals.length !== 2) throw new UsageError(`expected <integration> <connection>\n\n${connectUsage}`);
  const [integrationArg, connectionName] = positionals as [string, string];
  const integration = findIntegration(integrationArg, values.dir as string);
  const def = integration.connections[connectionName];
  if (!def)
    throw new UsageError(
      `integration ${integration.name} has no connection "${connectionName}" (it has: ${Object.keys(integration.connections).join(', ') || 'none'})`,
    );
  if (def.type !== 'hcm-oauth2') throw new UsageError(`connection ${connectionName} is of type ${def.type}; connect handles hcm-oauth2`);

  const viaServer = await authorizeThroughServer(integration.name, connectionName, values.data as string);
  if (viaServer) {
    process.stdout.write(
      `A running hcm-runner serve at ${viaServer.server} will finish the flow. Open this URL to authorize:\n\n  ${viaServer.url}\n\n` +
        `Then check GET /api/integrations/${integration.name} or run a step that uses the connection.\n`,
    );
    return 0;
  }

  // Resolved here only for our own listener: with a server, the server resolves it.
  const connection = await resolveConnectionOutsideRun(integration, connectionName);
  const services = await localServices(values.data as string);
  const callback = new URL('/oauth/callback', services.publicUrl);
  const { url } = startAuthorization({ integration: integration.name, connection, redirectUri: callback.href, tokens: services.tokens });
  const timeoutMs = intFlag(values.timeout as string | undefined, 'timeout', 600) * 1000;
  try {
    const outcome = await waitForCallback(callback, url, timeoutMs);
    process.stdout.write(`connection ${connectionName} of ${integration.name} is authorized; tokens stored in ${values.data}\n`);
    void outcome;
    return 0;
  } finally {
    await services.close();
  }
}

/**
 * When `serve` answers at the public URL, the flow belongs to it: its /oauth/callback completes
 * it and stores the tokens where every replica reads them. Needs the admin token
 * (HCM_RUNNER_ADMIN_TOKEN, else the one stored in the data directory).
 */
async function authorizeThroughServer(
  integration: string,
  connection: string,
  dataDir: string,
): Promise<{ server: string; url: string } | undefined> {
  const client = new AdminClient(undefined, dataDir);
  try {
    await request(`${client.base}/healthz`, { signal: AbortSignal.timeout(1_000) }).then((r) => r.body.dump());
  } catch {
    return undefined; // nothing listening: run our own callback listener
  }
  const answer = await client.call<{ url: string }>(
    'POST',
    `/integrations/${encodeURIComponent(integration)}/connections/${encodeURIComponent(connection)}/authorize`,
  );
  return { server: client.base, url: answer.url };
}

/** Serves `/oauth/callback` until the redirect arrives (or the time is up). */
function waitForCallback(callback: URL, authorizeUrl: string, timeoutMs: number): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const server = createServer((req, res) => {
      const u = new URL(req.url ?? '/', callback);
      if (u.pathname !== callback.pathname) return void res.writeHead(404).end();
      const error = u.searchParams.get('error');
      const code = u.searchParams.get('code');
      const state = u.searchParams.get('state') ?? '';
      if (error || !code) {
        res.writeHead(400, { 'content-type': 'text/plain' }).end(`Authorization failed: ${error ?? 'no code in the redirect'}`);
        return finish(new Error(`authorization failed: ${error ?? 'no code in the redirect'}`));
      }
      completeAuthorization(state, code, callback.href, undefined, u.searchParams.get('iss') ?? undefined).then(
        () => {
          res.writeHead(200, { 'content-type': 'text/plain' }).end('Connected. You can close this window.');
          finish();
        },
        (err: Error) => {
          res.writeHead(400, { 'content-type': 'text/plain' }).end(`Authorization failed: ${err.message}`);
          finish(err);
        },
      );
    });
    const timer = setTimeout(() => finish(new Error(`no redirect to ${callback.href} within ${timeoutMs / 1000} s`)), timeoutMs);
    const finish = (err?: Error) => {
      clearTimeout(timer);
      server.close();
      server.closeAllConnections();
      if (err) reject(err);
      else resolvePromise();
    };
    server.on('error', (err: NodeJS.ErrnoException) =>
      finish(
        new Error(
          err.code === 'EADDRINUSE'
            ? `${callback.host} is in use — is 'hcm-runner serve' running there? Then open the authorize URL; the server's /oauth/callback finishes the flow`
            : err.message,
        ),
      ),
    );
    server.listen(Number(callback.port || 80), callback.hostname, () => {
      process.stdout.write(`Open this URL to authorize:\n\n  ${authorizeUrl}\n\nWaiting for the redirect to ${callback.href} …\n`);
    });
  });
}

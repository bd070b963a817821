/**
 * OAuth 2.0 authorization code flow: the admin API starts it for one connection (returns the URL
 * to open in a browser) and `GET /oauth/callback` completes it (code → tokens, stored encrypted).
 * The pending state (state → PKCE verifier, integration, connection, redirect URI; no secrets) is
 * kept in the store, so with several replicas the callback may land on any of them; the
 * connection's configuration is resolved again there from the (shared) integrations folder.
 */
import type { Context } from 'hono';
import { HttpError, StorageUnavailableError } from '../common/errors.js';
import { beginAuthorization, finishAuthorization, statePendingAuthorizations } from '../connectors/hcm/oauth/authorize.js';
import type { ResolvedConnection } from '../connectors/types.js';
import { resolveConnectionOutsideRun } from '../engine/connections.js';
import type { Runtime } from '../runtime/runtime.js';
import type { AppEnv } from './types.js';

export function callbackPath(runtime: Runtime): string {
  return `${runtime.publicUrl}/oauth/callback`;
}

export function oauthCallback(runtime: Runtime) {
  return async (c: Context<AppEnv>) => {
    const { code, state, iss, error, error_description: description } = c.req.query();
    if (error) return c.json({ error: `authorization was not granted: ${error}${description ? ` (${description})` : ''}` }, 400);
    if (!code || !state) return c.json({ error: 'the OAuth callback needs code and state query parameters' }, 400);
    try {
      const done = await finishAuthorization(state, code, {
        pending: statePendingAuthorizations(runtime.store),
        tokens: runtime.store.tokens,
        redirectUri: callbackPath(runtime),
        iss,
        resolveConnection: (integration, connection) => resolveConnection(runtime, integration, connection),
      });
      runtime.logger?.info({ integration: done.integration, connection: done.connection }, 'OAuth connection authorized');
      const message = `Connection "${done.connection}" of integration "${done.integration}" is authorized. You can close this window.`;
      if ((c.req.header('accept') ?? '').includes('application/json'))
        return c.json({ status: 'connected', integration: done.integration, connection: done.connection });
      return c.html(
        `<!doctype html><meta charset="utf-8"><title>hcm-runner</title><p>${escapeHtml(message)}</p><p><a href="${escapeHtml(consoleLink(done.consoleOrigin))}">Back to the console</a></p>`,
      );
    } catch (err) {
      // An unusable store is not a bad callback: the app's error handler answers it (503).
      if (err instanceof StorageUnavailableError) throw err;
      return c.json({ error: `OAuth authorization failed: ${(err as Error).message}` }, 400);
    }
  };
}

/**
 * Starts the code flow of one connection (the admin API and the console's Connect button):
 * the URL to open in a browser. Throws HttpError 404 (unknown) or 400 (not authorizable).
 */
export async function authorizeConnection(
  runtime: Runtime,
  name: string,
  connectionName: string,
  /** Where the flow was started (the request's origin): the callback page links back there. */
  consoleOrigin?: string,
): Promise<{ url: string; state: string; redirectUri: string }> {
  const connection = await resolveConnection(runtime, name, connectionName);
  const redirectUri = callbackPath(runtime);
  const { url, state } = await beginAuthorization({
    integration: name,
    connection,
    redirectUri,
    pending: statePendingAuthorizations(runtime.store),
    consoleOrigin: httpOrigin(consoleOrigin),
  });
  return { url, state, redirectUri };
}

/** The browser-authorizable connection of a loaded integration, its config evaluated. */
export async function resolveConnection(runtime: Runtime, name: string, connectionName: string): Promise<ResolvedConnection> {
  const fail = (status: 400 | 404, message: string) => new HttpError(status, message);
  const integration = runtime.registry.get(name);
  if (!integration) throw fail(404, `no loaded integration named "${name}"`);
  const def = integration.connections[connectionName];
  if (!def) throw fail(404, `integration ${name} has no connection "${connectionName}"`);
  if (def.type !== 'hcm-oauth2') throw fail(400, `connection "${connectionName}" is of type ${def.type}, which needs no browser authorization`);
  try {
    return await resolveConnectionOutsideRun(integration, connectionName, runtime.env);
  } catch (err) {
    throw fail(400, (err as Error).message);
  }
}

/**
 * The callback page's link to the console's connections page: on the origin the flow was started
 * from — with `--admin-port` the console is on the admin listener, and the callback arrives on the
 * public one, where /console answers 404 — else relative (one listener serves both).
 */
function consoleLink(origin: string | undefined): string {
  return `${origin ?? ''}/console/connections`;
}

/** An http(s) origin, or undefined for anything else (nothing but an origin is kept). */
function httpOrigin(origin: string | undefined): string | undefined {
  if (!origin) return undefined;
  try {
    const u = new URL(origin);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : undefined;
  } catch {
    return undefined;
  }
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

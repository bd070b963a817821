/**
 * OAuth 2.0 authorization code flow: the admin API starts it for one connection (returns the URL
 * to open in a browser) and `GET /oauth/callback` completes it (code → tokens, stored encrypted).
 * The pending state lives in this process' memory, so start and callback must hit the same
 * replica (start it with `--server` pointing at that replica).
 */
import type { Context } from 'hono';
import { completeAuthorization, startAuthorization } from '../connectors/hcm/oauth/index.js';
import { evaluateTemplate } from '../engine/evaluate.js';
import type { Runtime } from '../runtime/runtime.js';
import type { AppEnv } from './types.js';

export function callbackPath(runtime: Runtime): string {
  return `${runtime.publicUrl}/oauth/callback`;
}

export function oauthCallback(runtime: Runtime) {
  return async (c: Context<AppEnv>) => {
    const { code, state, error, error_description: description } = c.req.query();
    if (error) return c.json({ error: `authorization was not granted: ${error}${description ? ` (${description})` : ''}` }, 400);
    if (!code || !state) return c.json({ error: 'the OAuth callback needs code and state query parameters' }, 400);
    try {
      const done = await completeAuthorization(state, code, callbackPath(runtime));
      runtime.logger?.info({ integration: done.integration, connection: done.connection }, 'OAuth connection authorized');
      const message = `Connection "${done.connection}" of integration "${done.integration}" is authorized. You can close this window.`;
      if ((c.req.header('accept') ?? '').includes('application/json')) return c.json({ status: 'connected', integration: done.integration, connection: done.connection });
      return c.html(`<!doctype html><meta charset="utf-8"><title>hcm-runner</title><p>${escapeHtml(message)}</p>`);
    } catch (err) {
      return c.json({ error: `OAuth authorization failed: ${(err as Error).message}` }, 400);
    }
  };
}

/** POST /api/integrations/{name}/connections/{connection}/authorize → {url, state, redirectUri}. */
export function connectionAuthorizeRoute(runtime: Runtime) {
  return async (c: Context<AppEnv>) => {
    const name = c.req.param('name')!;
    const connectionName = c.req.param('connection')!;
    const integration = runtime.registry.get(name);
    if (!integration) return c.json({ error: `no loaded integration named "${name}"` }, 404);
    const def = integration.connections[connectionName];
    if (!def) return c.json({ error: `integration ${name} has no connection "${connectionName}"` }, 404);
    if (def.type !== 'hcm-oauth2') return c.json({ error: `connection "${connectionName}" is of type ${def.type}, which needs no browser authorization` }, 400);
    let config: Record<string, unknown>;
    try {
      config = (await evaluateTemplate(def.config, { trigger: {}, steps: {}, errors: {}, config: {}, execution: {}, state: {}, env: runtime.env })) as Record<string, unknown>;
    } catch (err) {
      return c.json({ error: `connection "${connectionName}": ${(err as Error).message}` }, 400);
    }
    const redirectUri = callbackPath(runtime);
    const { url, state } = startAuthorization({ integration: name, connection: { name: connectionName, type: def.type, config }, redirectUri, tokens: runtime.store.tokens });
    return c.json({ url, state, redirectUri });
  };
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/**
 * A real OAuth 2.0 / OpenID Connect server for interop tests: oidc-provider (certified) on a
 * loopback port, with
 * - an interaction route that approves every authorization at once (no browser: login and consent
 *   are granted for the scopes the request kept — oidc-provider drops `offline_access` unless
 *   `prompt=consent` was sent, as OpenID Connect says);
 * - a small resource server under `/ccx/` that accepts only live access tokens of this provider
 *   (checked with the provider itself), standing in for the HCM API;
 * - counters of token endpoint requests and controls to revoke grants and set token lifetimes.
 *
 * The provider is built once the runner's callback URL is known (`configure`), so the HTTP port
 * can be handed to the runner first.
 *
 * oidc-provider 9 warns that it wants Node.js 22 at import ("Unsupported runtime"); it runs on
 * Node.js 20.19, the version package.json allows, and every 9.x release warns the same way.
 */
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type Configuration } from 'oidc-provider';

export interface OidcClient {
  clientId: string;
  clientSecret: string;
  /** How the client authenticates at the token endpoint (default client_secret_post). */
  auth?: 'client_secret_post' | 'client_secret_basic';
}

export interface OidcServer {
  /** The issuer, also the base URL: authorize `/auth`, token `/token`, API `/ccx`. */
  issuer: string;
  authorizeUrl: string;
  tokenUrl: string;
  apiUrl: string;
  /** Builds the provider for these clients, all registered with `redirectUri`. */
  configure(redirectUri: string, clients: OidcClient[]): void;
  /** POSTs to the token endpoint so far, by grant_type ('?' when unreadable). */
  tokenRequests: Array<{ grantType: string; clientId?: string; status?: number }>;
  /** Refresh-token grants answered so far. */
  refreshes(clientId?: string): number;
  /** API requests, with whether the token was accepted. */
  apiRequests: Array<{ path: string; accepted: boolean }>;
  /** Access token lifetime in seconds for tokens issued from now on. */
  accessTokenTtlSec: number;
  /** Revokes every grant of `clientId` (its refresh and access tokens stop working). */
  revokeGrants(clientId: string): Promise<number>;
  /**
   * Follows an authorize URL as a browser would (cookies kept), approving at the interaction, and
   * returns the redirect back to the client (its URL, with code, state and iss).
   */
  authorize(url: string): Promise<URL>;
  close(): Promise<void>;
}

/** The provider's ID token signing key (RS256), made here instead of its development-only default. */
const signingKey = { ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }), kid: 'interop', use: 'sig' };

export async function startOidcServer(): Promise<OidcServer> {
  let provider: Provider | undefined;
  const grants = new Map<string, string[]>(); // clientId → grant ids
  const tokenRequests: OidcServer['tokenRequests'] = [];
  const apiRequests: OidcServer['apiRequests'] = [];
  const state = { accessTokenTtlSec: 3600 };
  // The provider parses the body; its grant events say which grant a token request was for.
  const pendingToken = new WeakMap<IncomingMessage, OidcServer['tokenRequests'][number]>();
  const noteGrant = (ctx: { req: IncomingMessage; oidc?: { params?: Record<string, unknown>; client?: { clientId: string } } }) => {
    const entry = pendingToken.get(ctx.req);
    if (!entry) return;
    entry.grantType = String(ctx.oidc?.params?.grant_type ?? '?');
    entry.clientId =
      ctx.oidc?.client?.clientId ?? (ctx.oidc?.params?.client_id as string | undefined) ?? basicClientId(ctx.req.headers.authorization);
  };

  const server: Server = createServer((req, res) => {
    if (!provider) return void res.writeHead(503).end();
    const path = (req.url ?? '/').split('?')[0]!;
    if (path.startsWith('/ccx/')) return void api(provider, req, res, path);
    if (path.startsWith('/interaction/')) return void approve(provider, req, res);
    if (path === '/token' && req.method === 'POST') {
      const entry: OidcServer['tokenRequests'][number] = { grantType: '?' };
      tokenRequests.push(entry);
      pendingToken.set(req, entry);
      res.on('finish', () => (entry.status = res.statusCode));
    }
    provider.callback()(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  async function api(p: Provider, req: IncomingMessage, res: ServerResponse, path: string) {
    const m = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    const token = m ? await p.AccessToken.find(m[1]!) : undefined;
    const accepted = !!token && !token.isExpired;
    apiRequests.push({ path, accepted });
    if (!accepted) {
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer error="invalid_token"' });
      return void res.end(JSON.stringify({ error: 'invalid or expired access token' }));
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ data: [{ id: 'w1', descriptor: 'Worker One' }], total: 1 }));
  }

  /** Login and consent at once, for whatever the authorization request kept. */
  async function approve(p: Provider, req: IncomingMessage, res: ServerResponse) {
    try {
      const details = await p.interactionDetails(req, res);
      const clientId = String(details.params.client_id);
      const grant = new p.Grant({ accountId: 'user-1', clientId });
      const missing = (details.prompt.details.missingOIDCScope as string[] | undefined) ?? [];
      if (missing.length) grant.addOIDCScope(missing.join(' '));
      const grantId = await grant.save();
      grants.set(clientId, [...(grants.get(clientId) ?? []), grantId]);
      await p.interactionFinished(req, res, { login: { accountId: 'user-1' }, consent: { grantId } }, { mergeWithLastSubmission: false });
    } catch (err) {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(String(err));
    }
  }

  return {
    issuer,
    authorizeUrl: `${issuer}/auth`,
    tokenUrl: `${issuer}/token`,
    apiUrl: `${issuer}/ccx`,
    tokenRequests,
    apiRequests,
    get accessTokenTtlSec() {
      return state.accessTokenTtlSec;
    },
    set accessTokenTtlSec(v: number) {
      state.accessTokenTtlSec = v;
    },
    refreshes: (clientId) => tokenRequests.filter((t) => t.grantType === 'refresh_token' && (!clientId || t.clientId === clientId)).length,
    configure(redirectUri, clients) {
      const config: Configuration = {
        clients: clients.map((c) => ({
          client_id: c.clientId,
          client_secret: c.clientSecret,
          redirect_uris: [redirectUri],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: c.auth ?? 'client_secret_post',
        })),
        cookies: { keys: ['interop-test-cookie-key'] },
        findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
        interactions: { url: async (_ctx, interaction) => `/interaction/${interaction.uid}` },
        features: { devInteractions: { enabled: false } },
        pkce: { required: () => true },
        // Every refresh rotates the refresh token (the old one stops working).
        rotateRefreshToken: true,
        jwks: { keys: [signingKey] },
        ttl: {
          AccessToken: () => state.accessTokenTtlSec,
          IdToken: 3600,
          AuthorizationCode: 60,
          Grant: 3600,
          Interaction: 600,
          RefreshToken: 3600,
          Session: 3600,
        },
      };
      provider = new Provider(issuer, config);
      provider.on('grant.success', noteGrant);
      provider.on('grant.error', noteGrant);
    },
    async revokeGrants(clientId) {
      const ids = grants.get(clientId) ?? [];
      grants.delete(clientId);
      for (const id of ids) await (await provider!.Grant.find(id))?.destroy();
      return ids.length;
    },
    async authorize(url) {
      const jar = new Map<string, string>();
      let next = new URL(url);
      for (let hop = 0; hop < 10; hop++) {
        if (next.origin !== issuer) return next; // back at the client
        const res = await fetch(next, { redirect: 'manual', headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } });
        for (const c of res.headers.getSetCookie()) {
          const [pair] = c.split(';');
          const i = pair!.indexOf('=');
          jar.set(pair!.slice(0, i), pair!.slice(i + 1));
        }
        const location = res.headers.get('location');
        if (!location) throw new Error(`authorization stopped at ${next.pathname} with ${res.status}: ${await res.text()}`);
        await res.body?.cancel();
        next = new URL(location, next);
      }
      throw new Error('too many redirects while authorizing');
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

function basicClientId(header: string | undefined): string | undefined {
  if (!header || !/^basic /i.test(header)) return undefined;
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  return decodeURIComponent(decoded.split(':')[0] ?? '');
}

/**
 * Authorization-code flow: authorize URL (PKCE S256 always sent; servers that don't support it
 * ignore it), code exchange, and pending authorizations (state → verifier …): in this process'
 * memory (`startAuthorization`/`completeAuthorization`, used by `hcm-runner connect`), or in a
 * shared store (`beginAuthorization`/`finishAuthorization`, used by the server's
 * `/oauth/callback`, so a callback landing on another replica completes).
 */
import { createHash, randomBytes } from 'node:crypto';
import { ActionError } from '../../../common/errors.js';
import type { ResolvedConnection, StoredTokens, TokenStore } from '../../types.js';
import { connectionConfig, tokenStoreKey } from './config.js';
import { asActionError, clientRefusal, postToken } from './token-endpoint.js';

const b64url = (buf: Buffer) => buf.toString('base64url');

export function createPkce(): { codeVerifier: string; codeChallenge: string } {
  const codeVerifier = b64url(randomBytes(32));
  return { codeVerifier, codeChallenge: b64url(createHash('sha256').update(codeVerifier).digest()) };
}

export function buildAuthorizeUrl(conn: ResolvedConnection, opts: { redirectUri: string; state: string; codeChallenge?: string }): string {
  const conf = connectionConfig(conn);
  const url = new URL(conf.authorizeUrl);
  for (const [k, v] of Object.entries(conf.authorizeParams)) url.searchParams.set(k, v);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', conf.clientId);
  url.searchParams.set('redirect_uri', opts.redirectUri);
  if (conf.scopes) url.searchParams.set('scope', conf.scopes);
  url.searchParams.set('state', opts.state);
  if (opts.codeChallenge) {
    url.searchParams.set('code_challenge', opts.codeChallenge);
    url.searchParams.set('code_challenge_method', 'S256');
  }
  return url.toString();
}

/** Exchanges an authorization code and stores the tokens under `storeKey`. */
export async function exchangeCode(
  conn: ResolvedConnection,
  args: { code: string; redirectUri: string; codeVerifier?: string },
  tokens: TokenStore,
  storeKey: string,
  signal?: AbortSignal,
): Promise<StoredTokens> {
  const conf = connectionConfig(conn);
  const params: Record<string, string> = { grant_type: 'authorization_code', code: args.code, redirect_uri: args.redirectUri };
  if (args.codeVerifier) params.code_verifier = args.codeVerifier;
  let fresh: StoredTokens;
  const what = `connection ${conn.name}: authorization code exchange failed`;
  try {
    fresh = await postToken(conf, params, signal);
  } catch (err) {
    throw clientRefusal(err, what, conn.name) ?? asActionError(err, what, 'authorization_failed');
  }
  // Without a refresh token the connection would stop working when this access token expires,
  // while saying "authorized": refused now, when the person who can fix it is looking.
  if (!fresh.refreshToken) {
    throw new ActionError(
      `${what}: the server returned no refresh token, so the connection would stop working when the access token expires. ` +
        'An OpenID Connect server issues one only for the scope offline_access and, for that, only with prompt=consent: ' +
        `add offline_access to scopes and authorizeParams: { prompt: consent } to connection ${conn.name}, then connect again ` +
        '(other servers: allow the API client the refresh_token grant)',
      { code: 'no_refresh_token' },
    );
  }
  await tokens.withLock(storeKey, () => tokens.set(storeKey, fresh));
  return fresh;
}

/**
 * RFC 9207: an authorization response names its issuer in `iss`. When the server sends one and the
 * connection names its `issuer`, they must be equal — otherwise the code may come from another
 * server the browser was sent to (a mix-up attack), and is not exchanged.
 */
export function checkIssuer(conn: ResolvedConnection, iss: string | undefined): void {
  if (iss === undefined) return;
  const expected = connectionConfig(conn).issuer;
  if (expected === undefined || expected === iss) return;
  throw new ActionError(
    `connection ${conn.name}: the authorization response came from issuer ${JSON.stringify(iss.slice(0, 200))}, ` +
      `not ${JSON.stringify(expected)} (the connection's issuer): refused; check the connection's issuer and authorizeUrl`,
    { code: 'issuer_mismatch' },
  );
}

interface Pending {
  integration: string;
  connection: ResolvedConnection;
  redirectUri: string;
  codeVerifier: string;
  tokens: TokenStore;
  createdAt: number;
}

export const PENDING_TTL_MS = 15 * 60 * 1000;
const pending = new Map<string, Pending>();

function sweep(): void {
  const now = Date.now();
  for (const [state, p] of pending) if (now - p.createdAt > PENDING_TTL_MS) pending.delete(state);
}

/** Starts a code flow for one connection: remembers state → verifier in memory, returns the URL to open. */
export function startAuthorization(args: { integration: string; connection: ResolvedConnection; redirectUri: string; tokens: TokenStore }): {
  url: string;
  state: string;
} {
  sweep();
  const state = b64url(randomBytes(24));
  const { codeVerifier, codeChallenge } = createPkce();
  pending.set(state, { ...args, codeVerifier, createdAt: Date.now() });
  return { url: buildAuthorizeUrl(args.connection, { redirectUri: args.redirectUri, state, codeChallenge }), state };
}

/** The callback half: exchanges the code for the pending `state` and stores the tokens. */
export async function completeAuthorization(
  state: string,
  code: string,
  redirectUri?: string,
  signal?: AbortSignal,
  /** The callback's `iss` parameter (RFC 9207), when the server sent one. */
  iss?: string,
): Promise<{ integration: string; connection: string; storeKey: string }> {
  sweep();
  const p = pending.get(state);
  if (!p) throw new ActionError('unknown or expired OAuth state: start the authorization again', { code: 'invalid_state' });
  pending.delete(state);
  checkIssuer(p.connection, iss);
  const storeKey = tokenStoreKey(p.connection);
  await exchangeCode(p.connection, { code, redirectUri: redirectUri ?? p.redirectUri, codeVerifier: p.codeVerifier }, p.tokens, storeKey, signal);
  return { integration: p.integration, connection: p.connection.name, storeKey };
}

export function hasPendingAuthorization(state: string): boolean {
  return pending.has(state);
}

export const pendingAuthorizations = { start: startAuthorization, complete: completeAuthorization, has: hasPendingAuthorization };

// Pending authorizations in a shared store ---------------------------------------------------------

/** What a callback needs to finish; no secret (the connection is resolved again on callback). */
export interface PendingAuthorization {
  integration: string;
  /** The connection's name. */
  connection: string;
  redirectUri: string;
  codeVerifier: string;
  createdAt: number;
  /**
   * The origin of the console (or API client) that started the flow, e.g. the admin listener's:
   * the callback page links back there, not to the public listener it is served on.
   */
  consoleOrigin?: string;
}

export interface PendingAuthorizationStore {
  put(state: string, pending: PendingAuthorization): Promise<void>;
  /** Returns and forgets the entry (single use). */
  take(state: string): Promise<PendingAuthorization | undefined>;
}

/** The store's trigger-state table, structurally (the runtime's Store fits). */
export interface StateTable {
  getState(integration: string, key: string): Promise<unknown>;
  setState(integration: string, key: string, value: unknown): Promise<void>;
  deleteState(integration: string, key?: string): Promise<void>;
  takeState?(integration: string, key: string): Promise<unknown>;
}

/** Not a valid integration name, so it never collides with an integration's state. */
const PENDING_NAMESPACE = '~oauth-pending';

/** Pending authorizations kept in the store's trigger-state table (shared by all replicas). */
export function statePendingAuthorizations(table: StateTable): PendingAuthorizationStore {
  return {
    put: (state, p) => table.setState(PENDING_NAMESPACE, state, p),
    take: async (state) => {
      let value: unknown;
      if (table.takeState) value = await table.takeState(PENDING_NAMESPACE, state);
      else {
        value = await table.getState(PENDING_NAMESPACE, state);
        if (value !== undefined) await table.deleteState(PENDING_NAMESPACE, state);
      }
      return value && typeof value === 'object' ? (value as PendingAuthorization) : undefined;
    },
  };
}

/** Like startAuthorization, with the pending state in `pending` (shared across replicas). */
export async function beginAuthorization(args: {
  integration: string;
  connection: ResolvedConnection;
  redirectUri: string;
  pending: PendingAuthorizationStore;
  consoleOrigin?: string;
}): Promise<{ url: string; state: string }> {
  const state = b64url(randomBytes(24));
  const { codeVerifier, codeChallenge } = createPkce();
  const url = buildAuthorizeUrl(args.connection, { redirectUri: args.redirectUri, state, codeChallenge });
  await args.pending.put(state, {
    integration: args.integration,
    connection: args.connection.name,
    redirectUri: args.redirectUri,
    codeVerifier,
    createdAt: Date.now(),
    ...(args.consoleOrigin ? { consoleOrigin: args.consoleOrigin } : {}),
  });
  return { url, state };
}

/**
 * The callback half for `beginAuthorization`: takes the pending entry (single use, expires after
 * PENDING_TTL_MS), resolves the connection again on this replica, exchanges the code.
 */
export async function finishAuthorization(
  state: string,
  code: string,
  opts: {
    pending: PendingAuthorizationStore;
    tokens: TokenStore;
    resolveConnection(integration: string, connection: string): Promise<ResolvedConnection>;
    redirectUri?: string;
    signal?: AbortSignal;
    /** The callback's `iss` parameter (RFC 9207), when the server sent one. */
    iss?: string;
  },
): Promise<{ integration: string; connection: string; storeKey: string; consoleOrigin?: string }> {
  const p = await opts.pending.take(state);
  if (!p || Date.now() - p.createdAt > PENDING_TTL_MS)
    throw new ActionError('unknown or expired OAuth state: start the authorization again', { code: 'invalid_state' });
  const connection = await opts.resolveConnection(p.integration, p.connection);
  checkIssuer(connection, opts.iss);
  const storeKey = tokenStoreKey(connection);
  await exchangeCode(
    connection,
    { code, redirectUri: opts.redirectUri ?? p.redirectUri, codeVerifier: p.codeVerifier },
    opts.tokens,
    storeKey,
    opts.signal,
  );
  return { integration: p.integration, connection: connection.name, storeKey, ...(p.consoleOrigin ? { consoleOrigin: p.consoleOrigin } : {}) };
}

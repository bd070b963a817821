/**
 * Access tokens for an HCM connection: refreshed when expiring within the refresh margin (the
 * smaller of 5 minutes and a fifth of the token's lifetime, `refreshAt`) or after a 401,
 * one refresh at a time per connection (an in-process promise map plus the store's lock, with the
 * store re-read inside the lock so replicas sharing a store also refresh once).
 *
 * A request takes the token this process last read or wrote (`TokenStore.peek`, at most
 * TOKEN_REUSE_MS old) without a store read; when that token is expiring or was just rejected
 * (401), the store is read, so a token another replica refreshed meanwhile is found there.
 */
import { ActionError } from '../../../common/errors.js';
import type { ResolvedConnection, StoredTokens, TokenStore } from '../../types.js';
import { connectHint, connectionConfig } from './config.js';
import { needsAuthorizationError, refreshTokenOf, refusedGrant } from './needs-authorization.js';
import { asActionError, clientRefusal, postToken, REFRESH_MARGIN_MS, TokenEndpointError } from './token-endpoint.js';

export { REFRESH_MARGIN_MS } from './token-endpoint.js';
/**
 * How long a token read or written by this process is used without reading the store again: how
 * late another replica's re-authorization or disconnect of the connection is seen here (a token
 * it replaced that HCM rejects is replaced here at once, on the 401).
 */
export const TOKEN_REUSE_MS = 5000;

const inflight = new Map<string, Promise<StoredTokens>>();

/** When a token is refreshed before use; records written before `refreshAt` existed use the full margin. */
const refreshAt = (t: StoredTokens): number | undefined => t.refreshAt ?? (t.expiresAt === undefined ? undefined : t.expiresAt - REFRESH_MARGIN_MS);

const usable = (t: StoredTokens | undefined, stale?: string): t is StoredTokens & { accessToken: string } => {
  if (!t?.accessToken || t.accessToken === stale) return false;
  const at = refreshAt(t);
  return at === undefined || at > Date.now();
};

/**
 * A valid access token. `staleToken`: the token a request just got 401 with; a stored token equal
 * to it is treated as expired (so 20 concurrent 401s still cause one refresh).
 */
export async function getAccessToken(
  conn: ResolvedConnection,
  tokens: TokenStore,
  storeKey: string,
  signal?: AbortSignal,
  staleToken?: string,
  /** Named in the "run hcm-runner connect …" hint of an authorization error. */
  integration = '<integration>',
): Promise<string> {
  const recent = tokens.peek?.(storeKey, TOKEN_REUSE_MS);
  if (usable(recent, staleToken)) return recent.accessToken;
  const current = await tokens.get(storeKey);
  if (usable(current, staleToken)) return current.accessToken;
  let p = inflight.get(storeKey);
  if (!p) {
    p = refreshLocked(conn, tokens, storeKey, signal, staleToken, integration).finally(() => inflight.delete(storeKey));
    inflight.set(storeKey, p);
  }
  const fresh = await p;
  return fresh.accessToken!;
}

async function refreshLocked(
  conn: ResolvedConnection,
  tokens: TokenStore,
  storeKey: string,
  signal: AbortSignal | undefined,
  staleToken: string | undefined,
  integration: string,
): Promise<StoredTokens> {
  const conf = connectionConfig(conn);
  return tokens.withLock(storeKey, async () => {
    const stored = await tokens.get(storeKey); // another replica may have refreshed meanwhile
    if (usable(stored, staleToken)) return stored;
    const refreshToken = refreshTokenOf(stored, conf.refreshToken)?.token;
    // No grant, or one the token endpoint refused: only a new authorization helps, so the token
    // endpoint is not asked again.
    if (!refreshToken) throw needsAuthorizationError(conn.name, integration, stored?.needsAuthorization);
    let fresh: StoredTokens;
    try {
      fresh = await postToken(conf, { grant_type: 'refresh_token', refresh_token: refreshToken }, signal, { ...stored, refreshToken });
    } catch (err) {
      const what = `connection ${conn.name}: token refresh failed`;
      const client = clientRefusal(err, what, conn.name);
      if (client) throw client;
      const e = asActionError(err, what);
      if (err instanceof TokenEndpointError && err.oauthError === 'invalid_grant') {
        // Revoked, expired or rotated away: remembered, so later calls fail at once without it.
        const record = refusedGrant(err.message, refreshToken, conf.refreshToken);
        await tokens.set(storeKey, record);
        throw needsAuthorizationError(conn.name, integration, record.needsAuthorization, err.status);
      }
      if (e.details.status === 400) {
        throw new ActionError(`${e.message}; the refresh token was rejected: ${connectHint(integration, conn.name)} to authorize again`, {
          code: 'needs_authorization',
          status: 400,
        });
      }
      throw new ActionError(`${e.message}; check the connection's token URL and client credentials, then retry`, e.details);
    }
    await tokens.set(storeKey, fresh);
    return fresh;
  });
}

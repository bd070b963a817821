/**
 * What an OAuth connection needs right now, as the token provider would see it: tokens stored
 * under its key (or a refresh token in its configuration) mean it can run; otherwise someone has
 * to authorize it in a browser — also after the token endpoint refused its grant, which the stored
 * record remembers (needs-authorization.ts). Never returns a token.
 */
import type { ResolvedConnection, TokenStore } from '../../types.js';
import { connectionConfig, tokenStoreKey } from './config.js';
import { refreshTokenOf } from './needs-authorization.js';

export interface ConnectionState {
  state: 'authorized' | 'needs authorization';
  /** When the stored access token expires (ISO); it is refreshed before that. */
  expiresAt?: string;
  /** Where the refresh token comes from: stored by an authorization, or the connection's config. */
  refreshToken?: 'stored' | 'configured';
  /** Why it needs authorization again: what the token endpoint answered when it refused the grant. */
  reason?: string;
  /** When the token endpoint refused the grant (ISO). */
  refusedAt?: string;
}

export async function connectionState(conn: ResolvedConnection, tokens: TokenStore): Promise<ConnectionState> {
  const stored = await tokens.get(tokenStoreKey(conn));
  const expiresAt = stored?.expiresAt !== undefined ? new Date(stored.expiresAt).toISOString() : undefined;
  const refreshToken = refreshTokenOf(stored, connectionConfig(conn).refreshToken)?.source;
  const liveAccess = !!stored?.accessToken && (stored.expiresAt === undefined || stored.expiresAt > Date.now());
  if (refreshToken || liveAccess) return { state: 'authorized', ...(expiresAt ? { expiresAt } : {}), ...(refreshToken ? { refreshToken } : {}) };
  const refusal = stored?.needsAuthorization;
  return {
    state: 'needs authorization',
    ...(expiresAt ? { expiresAt } : {}),
    ...(refusal ? { reason: refusal.reason, refusedAt: new Date(refusal.at).toISOString() } : {}),
  };
}

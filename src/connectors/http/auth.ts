/**
 * The bearer token of an HCM connection on every request (it wins over a user's Authorization
 * header); on a 401 answer one refresh (../hcm/oauth/provider.ts: single flight per connection,
 * across replicas) and one more attempt with the new token.
 */
import type { Dispatcher } from 'undici';
import type { ResolvedConnection, TokenStore } from '../types.js';
import { getAccessToken } from '../hcm/oauth/provider.js';
import { dispatchAttempts } from './redispatch.js';
import { callOf } from './call.js';
import { answerOf } from './response-error.js';

export interface BearerAuth {
  connection: ResolvedConnection;
  tokens: TokenStore;
  storeKey: string;
  /** Named in the "run hcm-runner connect …" hint of an authorization error. */
  integration?: string;
}

function withToken(opts: Dispatcher.DispatchOptions, token: string): Dispatcher.DispatchOptions {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries((opts.headers ?? {}) as Record<string, string>)) if (k.toLowerCase() !== 'authorization') headers[k] = v;
  headers.authorization = `Bearer ${token}`;
  return { ...opts, headers };
}

export function bearerAuthInterceptor(auth: BearerAuth): Dispatcher.DispatcherComposeInterceptor {
  return (dispatch) => (opts, handler) => {
    // The step's signal: a token refresh in flight is cancelled with the step (timeout, shutdown).
    const { signal } = callOf(opts);
    const token = (stale?: string) => getAccessToken(auth.connection, auth.tokens, auth.storeKey, signal, stale, auth.integration);
    let sent = '';
    return dispatchAttempts(
      dispatch,
      handler,
      async () => withToken(opts, (sent = await token())),
      async (err, n) => (n === 1 && answerOf(err)?.status === 401 ? withToken(opts, (sent = await token(sent))) : undefined),
    );
  };
}

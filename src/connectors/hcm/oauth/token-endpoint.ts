/** POSTs to the token endpoint (form-encoded; client credentials in the body or as HTTP Basic). */
import { request } from 'undici';
import { ActionError } from '../../../common/errors.js';
import type { StoredTokens } from '../../types.js';
import type { HcmConnectionConfig } from './config.js';

export const DEFAULT_EXPIRES_IN_SEC = 3600;

/** The longest refresh margin: a token is refreshed at most this long before it expires. */
export const REFRESH_MARGIN_MS = 5 * 60 * 1000;

/**
 * How long before its expiry a token living `lifetimeMs` is refreshed: 5 minutes, or a fifth of
 * its lifetime when that is shorter — a 60-second token is used for 48 seconds. (A fixed 5 minutes
 * would refresh such a token before every call, and concurrent calls would each see the new token
 * as expiring already.)
 */
export const refreshMarginMs = (lifetimeMs: number): number => Math.min(REFRESH_MARGIN_MS, lifetimeMs / 5);

export class TokenEndpointError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    readonly oauthError?: string,
  ) {
    super(message);
  }
}

export async function postToken(
  conf: HcmConnectionConfig & { name: string },
  params: Record<string, string>,
  signal?: AbortSignal,
  previous?: StoredTokens,
): Promise<StoredTokens> {
  const form = new URLSearchParams(params);
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  if (conf.clientAuth === 'basic') {
    const enc = (s: string) => encodeURIComponent(s);
    headers.authorization = `Basic ${Buffer.from(`${enc(conf.clientId)}:${enc(conf.clientSecret)}`).toString('base64')}`;
  } else {
    form.set('client_id', conf.clientId);
    form.set('client_secret', conf.clientSecret);
  }
  let res;
  try {
    res = await request(conf.tokenUrl, { method: 'POST', headers, body: form.toString(), signal });
  } catch (err) {
    throw new TokenEndpointError(`token endpoint unreachable (${(err as Error).name}: ${(err as Error).message})`);
  }
  const text = await res.body.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    /* not JSON */
  }
  if (res.statusCode >= 400 || typeof json.access_token !== 'string') {
    const oauthError = typeof json.error === 'string' ? json.error : undefined;
    // error_description is the server's text; it never carries our secrets.
    const desc = typeof json.error_description === 'string' ? `: ${json.error_description}` : '';
    throw new TokenEndpointError(`token endpoint answered ${res.statusCode}${oauthError ? ` ${oauthError}` : ''}${desc}`, res.statusCode, oauthError);
  }
  const expiresIn = Number(json.expires_in ?? DEFAULT_EXPIRES_IN_SEC);
  const lifetimeMs = (Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : DEFAULT_EXPIRES_IN_SEC) * 1000;
  const expiresAt = Date.now() + lifetimeMs;
  return {
    accessToken: json.access_token,
    refreshToken: typeof json.refresh_token === 'string' && json.refresh_token ? json.refresh_token : previous?.refreshToken,
    expiresAt,
    refreshAt: expiresAt - refreshMarginMs(lifetimeMs),
    tokenType: typeof json.token_type === 'string' ? json.token_type : 'Bearer',
    scope: typeof json.scope === 'string' ? json.scope : previous?.scope,
  };
}

export function asActionError(err: unknown, what: string, code = 'refresh_failed'): ActionError {
  if (err instanceof ActionError) return err;
  const e = err as TokenEndpointError;
  return new ActionError(`${what}: ${e.message}`, { code, status: e.status, retryable: e.status === undefined || e.status >= 500 });
}

/**
 * The token endpoint refused the client itself (RFC 6749 §5.2: `invalid_client`, normally 401):
 * the connection's clientId, clientSecret or clientAuth is wrong, and authorizing again cannot help.
 * `what` says which request failed ("connection hcm: token refresh failed").
 */
export function clientRefusal(err: unknown, what: string, connection: string): ActionError | undefined {
  if (!(err instanceof TokenEndpointError) || (err.status !== 401 && err.oauthError !== 'invalid_client')) return undefined;
  return new ActionError(
    `${what}: ${err.message}; the client credentials were refused by the token endpoint: check clientId / clientSecret ` +
      `(the keys clientId and clientSecret of connection ${connection}, and clientAuth — body or basic — as the API client is registered)`,
    { code: 'client_refused', status: err.status, retryable: false },
  );
}

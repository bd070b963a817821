/** POSTs to the token endpoint (form-encoded; client credentials in the body or as HTTP Basic). */
import { request } from 'undici';
import { ActionError } from '../../../common/errors.js';
import type { StoredTokens } from '../../types.js';
import type { HcmConnectionConfig } from './config.js';

export const DEFAULT_EXPIRES_IN_SEC = 3600;

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
  return {
    accessToken: json.access_token,
    refreshToken: typeof json.refresh_token === 'string' && json.refresh_token ? json.refresh_token : previous?.refreshToken,
    expiresAt: Date.now() + (Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : DEFAULT_EXPIRES_IN_SEC) * 1000,
    tokenType: typeof json.token_type === 'string' ? json.token_type : 'Bearer',
    scope: typeof json.scope === 'string' ? json.scope : previous?.scope,
  };
}

export function asActionError(err: unknown, what: string, code = 'refresh_failed'): ActionError {
  if (err instanceof ActionError) return err;
  const e = err as TokenEndpointError;
  return new ActionError(`${what}: ${e.message}`, { code, status: e.status, retryable: e.status === undefined || e.status >= 500 });
}

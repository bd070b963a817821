/**
 * A connection whose grant the token endpoint refused (`invalid_grant`: revoked, expired, or its
 * refresh token rotated away) needs a person to authorize it again. That is kept in the stored
 * token record (encrypted like the tokens, shared by replicas), so the API and the console say so
 * and no execution sends the dead refresh token again; a code exchange replaces the record.
 */
import { createHash } from 'node:crypto';
import { ActionError } from '../../../common/errors.js';
import type { NeedsAuthorization, StoredTokens } from '../../types.js';
import { connectHint } from './config.js';

/** Tells a refresh token apart without keeping it. */
export const fingerprint = (refreshToken: string): string => createHash('sha256').update(refreshToken).digest('hex').slice(0, 16);

/**
 * The refresh token to use: the stored one, else the connection's configured one — unless the
 * token endpoint already refused that very token (a newly configured one is tried).
 */
export function refreshTokenOf(
  stored: StoredTokens | undefined,
  configured: string | undefined,
): { token: string; source: 'stored' | 'configured' } | undefined {
  if (stored?.refreshToken) return { token: stored.refreshToken, source: 'stored' };
  if (!configured) return undefined;
  const dead = stored?.needsAuthorization?.deadRefreshTokens;
  return dead?.includes(fingerprint(configured)) ? undefined : { token: configured, source: 'configured' };
}

/**
 * The record stored when the token endpoint refused `refused`: no tokens, and why. The configured
 * refresh token, if any, is dead too — it started the same grant (or is the refused one).
 */
export function refusedGrant(reason: string, refused: string, configured: string | undefined): StoredTokens {
  const deadRefreshTokens = [...new Set([refused, ...(configured ? [configured] : [])].map(fingerprint))];
  const needsAuthorization: NeedsAuthorization = { reason, at: Date.now(), deadRefreshTokens };
  return { needsAuthorization };
}

/** The error of a call on a connection that has no usable grant: why, and the command that fixes it. */
export function needsAuthorizationError(connection: string, integration: string, refusal?: NeedsAuthorization, status?: number): ActionError {
  const message = refusal
    ? `connection ${connection} needs authorization: the token endpoint refused its refresh token at ${new Date(refusal.at).toISOString()} ` +
      `(${refusal.reason}); ${connectHint(integration, connection)} to authorize it again`
    : `connection ${connection} is not authorized yet (no stored tokens): ${connectHint(integration, connection)}`;
  return new ActionError(message, { code: 'needs_authorization', ...(status !== undefined ? { status } : {}) });
}

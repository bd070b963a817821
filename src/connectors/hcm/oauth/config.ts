/** The HCM connection's config, read defensively from a ResolvedConnection. */
import { createHash } from 'node:crypto';
import { ActionError } from '../../../common/errors.js';
import { setOwn } from '../../../common/own.js';
import type { ResolvedConnection } from '../../types.js';
import { AUTHORIZE_PARAMS_RESERVED, hcmConnectionType } from '../declarations/index.js';

/** Which keys are required, and clientAuth's values and default: the connection type's declaration. */
const declared = hcmConnectionType.inputs;

export interface HcmConnectionConfig {
  authorizeUrl: string;
  tokenUrl: string;
  apiUrl: string;
  tenantId: string;
  clientId: string;
  clientSecret: string;
  scopes?: string;
  refreshToken?: string;
  clientAuth: 'body' | 'basic';
  /** Extra authorization request parameters (e.g. prompt=consent); never the ones the runner sets. */
  authorizeParams: Record<string, string>;
  /** The expected `iss` of an authorization response (RFC 9207), when configured. */
  issuer?: string;
}

export function connectionConfig(conn: ResolvedConnection | undefined): HcmConnectionConfig & { name: string } {
  if (!conn) throw new ActionError('this action needs an HCM connection (connection: on the step)', { code: 'invalid_input' });
  const c = conn.config;
  const s = (k: keyof typeof declared & string): string | undefined => {
    const v = c[k];
    if (v === undefined || v === null || v === '') {
      if (declared[k]?.required) throw new ActionError(`connection ${conn.name}: ${k} is required`, { code: 'invalid_connection' });
      return undefined;
    }
    return String(v);
  };
  const tenantId = s('tenantId') ?? '';
  const sub = (u: string) => u.replaceAll('<tenant_id>', encodeURIComponent(tenantId));
  const scopes = c.scopes;
  return {
    name: conn.name,
    authorizeUrl: sub(s('authorizeUrl')!),
    tokenUrl: sub(s('tokenUrl')!),
    apiUrl: s('apiUrl')!,
    tenantId,
    clientId: s('clientId')!,
    clientSecret: s('clientSecret')!,
    scopes: Array.isArray(scopes) ? scopes.join(' ') : s('scopes'),
    refreshToken: s('refreshToken'),
    clientAuth: (declared.clientAuth!.enum!.includes(c.clientAuth)
      ? c.clientAuth
      : declared.clientAuth!.default) as HcmConnectionConfig['clientAuth'],
    authorizeParams: authorizeParamsOf(c.authorizeParams),
    issuer: s('issuer'),
  };
}

/** String values only, reserved keys left out (load-time validation refuses them already). */
function authorizeParamsOf(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!v || typeof v !== 'object' || Array.isArray(v)) return out;
  for (const [k, val] of Object.entries(v)) {
    if ((AUTHORIZE_PARAMS_RESERVED as readonly string[]).includes(k) || val === undefined || val === null) continue;
    setOwn(out, k, String(val));
  }
  return out;
}

/**
 * Where a connection's tokens are stored: one grant per (token endpoint, client id), so every
 * integration that names the same API client shares one token set. With rotating refresh
 * tokens that is the only safe choice — two copies of one grant would revoke each other — and
 * `hcm-runner connect` once authorizes them all.
 */
export function tokenStoreKey(conn: ResolvedConnection): string {
  const c = connectionConfig(conn);
  const grant = `${c.tokenUrl}\n${c.clientId}`;
  let key = storeKeys.get(grant);
  if (key === undefined) {
    key = `hcm:${createHash('sha256').update(grant).digest('hex').slice(0, 32)}`;
    if (storeKeys.size >= 1000) storeKeys.clear();
    storeKeys.set(grant, key);
  }
  return key;
}
/** Every HCM call asks for its connection's key: hashed once per grant. */
const storeKeys = new Map<string, string>();

export const connectHint = (integration: string, connection: string) => `run \`hcm-runner connect ${integration} ${connection}\``;

/** The env values that point an hcm-oauth2 connection written with `{env: HCM_…}` at a sandbox. */
import type { Sandbox } from '../../src/sandbox/index.js';

export function sandboxEnv(sb: Sandbox, extra: { refreshToken?: string } = {}): Record<string, string> {
  const env: Record<string, string> = {
    HCM_AUTHORIZE_URL: sb.authorizeUrl,
    HCM_TOKEN_URL: sb.tokenUrl,
    HCM_API_URL: sb.apiUrl,
    HCM_CLIENT_ID: 'sandbox-client',
    HCM_CLIENT_SECRET: 'sandbox-secret',
  };
  if (extra.refreshToken) env.HCM_REFRESH_TOKEN = extra.refreshToken;
  return env;
}

/**
 * A `connections:` block with one hcm-oauth2 connection `hcm` pointed at the sandbox, written out
 * (no env values), with a fresh refresh token; `extra` is appended as more keys of `hcm` (indented).
 */
export function sandboxConnectionYaml(sb: Sandbox, extra = ''): string {
  return `connections:
  hcm:
    type: hcm-oauth2
    authorizeUrl: ${sb.authorizeUrl}
    tokenUrl: ${sb.tokenUrl}
    apiUrl: ${sb.apiUrl}
    tenantId: acme
    clientId: sandbox-client
    clientSecret: sandbox-secret
    refreshToken: ${sb.issueRefreshToken()}
${extra}`;
}

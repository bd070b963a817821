import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';

export const CLIENT = { id: 'sandbox-client', secret: 'sandbox-secret' };

export async function start(opts: Parameters<typeof startSandbox>[0] = {}): Promise<Sandbox> {
  return startSandbox({ port: 0, quiet: true, ...opts });
}

export function tokenRequest(sb: Sandbox, form: Record<string, string>, basic?: { id: string; secret: string }) {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (basic) headers.authorization = `Basic ${Buffer.from(`${basic.id}:${basic.secret}`).toString('base64')}`;
  return fetch(`${sb.url}/ccx/oauth2/acme/token`, { method: 'POST', headers, body: new URLSearchParams(form) });
}

/** A fresh access token obtained through the refresh-token grant. */
export async function accessToken(sb: Sandbox): Promise<string> {
  const res = await tokenRequest(sb, {
    grant_type: 'refresh_token',
    refresh_token: sb.issueRefreshToken(),
    client_id: CLIENT.id,
    client_secret: CLIENT.secret,
  });
  if (res.status !== 200) throw new Error(`token request failed: ${res.status}`);
  return ((await res.json()) as { access_token: string }).access_token;
}

export function api(sb: Sandbox, token: string) {
  return (method: string, path: string, body?: unknown, extra: RequestInit = {}) =>
    fetch(sb.apiUrl + path, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      ...extra,
    });
}

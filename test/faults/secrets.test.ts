/**
 * No secret leaks: after a real `hcm-runner serve` process ran an OAuth integration against the
 * HCM sandbox (token refresh, rotation, a forced re-refresh) and an HMAC-signed webhook (with
 * callers sending Authorization headers), none of the secrets appears in the logs (stdout at
 * debug level, stderr), in the stored records (the SQLite files' bytes) or in admin API answers:
 * client secret, access and refresh tokens, the HMAC secret, Authorization header values and
 * HCM_RUNNER_ADMIN_TOKEN.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { bin, repoRoot } from '../helpers/cli.js';
import { poll, tempDir } from '../server/helpers.js';
import { freePort } from '../helpers/net.js';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'secrets');
const secret = (label: string) => `${label}-${randomBytes(12).toString('hex')}`;
const CLIENT_SECRET = secret('client-secret');
const HMAC_SECRET = secret('hmac-secret');
const ADMIN_TOKEN = secret('admin-token');
const CALLER_AUTH = `Bearer ${secret('caller-token')}`;
const CALLER_PROXY_AUTH = `Basic ${Buffer.from(`user:${secret('proxy-pass')}`).toString('base64')}`;

const data = tempDir('hcm-faults-secrets-');
let sb: Sandbox;
let child: ChildProcess;
let url: string;
let stdout = '';
let stderr = '';
let initialRefreshToken: string;
const apiAnswers: string[] = [];

async function api(path: string, method = 'GET'): Promise<any> {
  const res = await fetch(`${url}/api${path}`, { method, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  const text = await res.text();
  apiAnswers.push(text);
  return JSON.parse(text);
}

beforeAll(async () => {
  sb = await startSandbox({ port: 0, quiet: true, clientSecret: CLIENT_SECRET });
  initialRefreshToken = sb.issueRefreshToken();
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  child = spawn(process.execPath, [bin, 'serve', '--dir', fixtures, '--port', String(port), '--data', data.path], {
    cwd: repoRoot,
    env: {
      ...process.env,
      HCM_RUNNER_ADMIN_TOKEN: ADMIN_TOKEN,
      HCM_RUNNER_LOG_LEVEL: 'debug',
      HCM_AUTHORIZE_URL: sb.authorizeUrl,
      HCM_TOKEN_URL: sb.tokenUrl,
      HCM_API_URL: sb.apiUrl,
      HCM_CLIENT_ID: 'sandbox-client',
      HCM_CLIENT_SECRET: CLIENT_SECRET,
      HCM_REFRESH_TOKEN: initialRefreshToken,
      SCAN_SIGNING_SECRET: HMAC_SECRET,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (c) => (stdout += c));
  child.stderr!.on('data', (c) => (stderr += c));
  await poll(async () => ((await fetch(`${url}/healthz`).catch(() => undefined))?.status === 200 ? true : undefined), 30_000, 100);
});

afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGKILL');
    await new Promise((r) => child.once('close', r));
  }
  await sb?.close();
  data.remove();
});

describe('secrets never leak', () => {
  it('logs, stored records and API answers hold none of them', async () => {
    const integrations = await api('/integrations');
    const worker = integrations.find((i: any) => i.name === 'secret-worker').webhookUrls.live as string;
    const signed = integrations.find((i: any) => i.name === 'signed').webhookUrls.live as string;

    // OAuth: refresh, calls, then every token expired → a second refresh (rotation).
    for (let i = 0; i < 3; i++) {
      const r = await fetch(worker, { method: 'POST', headers: { authorization: CALLER_AUTH, 'proxy-authorization': CALLER_PROXY_AUTH } });
      expect(r.status, await r.text()).toBe(200);
    }
    sb.expireAllTokens();
    const again = await fetch(`${worker}?retry=yes`, { method: 'POST', headers: { authorization: CALLER_AUTH } });
    expect(again.status, await again.text()).toBe(200);
    // A failing HCM call logs an error (with the upstream answer) — still no secrets.
    sb.addFault({ match: { pathIncludes: '/workers/' }, status: 401, times: 5 });
    const fail = await fetch(worker, { method: 'POST', headers: { authorization: CALLER_AUTH } });
    expect(fail.status).toBe(500);
    sb.clearFaults();

    // HMAC webhook: signed (accepted), badly signed (401); callers send credentials too.
    const body = JSON.stringify({ event: 'ping', n: 1 });
    const sig = createHmac('sha256', HMAC_SECRET).update(body).digest('hex');
    const ok = await fetch(signed, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-signature': sig, authorization: CALLER_AUTH },
      body,
    });
    expect(ok.status).toBe(200);
    const bad = await fetch(signed, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-signature': 'deadbeef', authorization: CALLER_AUTH },
      body,
    });
    expect(bad.status).toBe(401);

    // Wait for every execution to finish; read them all back through the API.
    const list = await poll(async () => {
      const l = await api('/executions?limit=500');
      return l.length >= 6 && l.every((e: any) => e.status === 'succeeded' || e.status === 'failed') ? l : undefined;
    });
    for (const e of list) await api(`/executions/${e.id}`);
    const signedRun = list.find((e: any) => e.integration === 'signed');
    const signedRecord = await api(`/executions/${signedRun.id}`);
    expect(signedRecord.trigger.headers.authorization).toBe('[redacted]');
    await api('/integrations/secret-worker');

    // Stop the server (graceful) so the logs are flushed and the database files are final.
    child.kill('SIGTERM');
    const code = await new Promise((r) => child.once('close', r));
    expect(code).toBe(0);

    // The secrets: configured ones, and every token the sandbox issued or saw.
    const accessTokens = new Set<string>([...sb.state.oauth.accessTokens.keys()]);
    for (const r of sb.requests) {
      const m = /^Bearer\s+(.+)$/i.exec(r.headers.authorization ?? '');
      if (m) accessTokens.add(m[1]!);
    }
    const refreshTokens = new Set<string>([initialRefreshToken, ...sb.state.oauth.refreshTokens.keys()]);
    expect(accessTokens.size).toBeGreaterThanOrEqual(2); // refreshed twice
    expect(refreshTokens.size).toBeGreaterThanOrEqual(2); // rotated
    const secrets: Record<string, string> = {
      'client secret': CLIENT_SECRET,
      'HMAC secret': HMAC_SECRET,
      HCM_RUNNER_ADMIN_TOKEN: ADMIN_TOKEN,
      'caller Authorization': CALLER_AUTH.slice('Bearer '.length),
      'caller Proxy-Authorization': CALLER_PROXY_AUTH.slice('Basic '.length),
    };
    for (const t of accessTokens) secrets[`access token ${t.slice(0, 6)}…`] = t;
    for (const t of refreshTokens) secrets[`refresh token ${t.slice(0, 6)}…`] = t;

    const dbBytes = readdirSync(data.path)
      .filter((f) => f.startsWith('hcm-runner.db'))
      .map((f) => readFileSync(join(data.path, f)).toString('latin1'))
      .join('\n');
    const places: Record<string, string> = { 'logs (stdout)': stdout, stderr, 'SQLite files': dbBytes, 'admin API answers': apiAnswers.join('\n') };
    expect(stdout.split('\n').filter(Boolean).length).toBeGreaterThan(5); // the logs were captured
    expect(dbBytes.length).toBeGreaterThan(0);

    const leaks: string[] = [];
    for (const [where, text] of Object.entries(places)) {
      for (const [what, value] of Object.entries(secrets)) if (value && text.includes(value)) leaks.push(`${what} in ${where}`);
    }
    expect(leaks).toEqual([]);
  });
});

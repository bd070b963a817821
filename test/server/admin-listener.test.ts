/**
 * `--admin-port`: the console, /api and /metrics on their own listener, the main port serving only
 * what the internet may reach (webhooks, callbacks, the OAuth callback, /healthz) — so a webhook's
 * answer never shares an origin with the console. Also: absolute-form request targets.
 */
import { execFile } from 'node:child_process';
import { connect } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/net.js';
import { ADMIN, killServeChildren, poll, root, spawnServe, startTestServer, type TestServer } from './helpers.js';

const run = promisify(execFile);
let split: TestServer;
let single: TestServer;
beforeAll(async () => {
  [split, single] = await Promise.all([startTestServer({ adminPort: 0 }), startTestServer()]);
});
afterAll(async () => {
  killServeChildren();
  await Promise.all([split?.stop(), single?.stop()]);
});

const auth = { authorization: `Bearer ${ADMIN}` };
const status = async (url: string, init?: RequestInit) => (await fetch(url, { redirect: 'manual', ...init })).status;

/** One raw HTTP/1.1 request (what fetch cannot send: an absolute-form target); the whole answer. */
function rawRequest(port: number, head: string, body = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let out = '';
    socket.setEncoding('latin1');
    socket.on('data', (d) => (out += d));
    socket.on('end', () => resolve(out));
    socket.on('error', reject);
    socket.write(`${head}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });
}

describe('with --admin-port', () => {
  it('the main port answers 404 for the console, /api, /metrics and /, and serves webhooks and /healthz', async () => {
    expect(split.adminUrl).not.toBe(split.url);
    for (const path of [
      '/api/integrations',
      '/console/',
      '/console',
      '/console/sign-in',
      '/metrics',
      '/',
      '/%61pi/integrations',
      '/api/../api/integrations',
    ])
      expect(await status(`${split.url}${path}`, { headers: auth }), path).toBe(404);
    expect(await status(`${split.url}/console/sign-in`, { method: 'POST', body: new URLSearchParams({ token: ADMIN }) })).toBe(404);
    expect(await status(`${split.url}/healthz`)).toBe(200);

    const sent = await fetch(split.urls('echo').live, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
    expect(sent.status).toBe(200);
    expect(split.urls('echo').live.startsWith(`${split.url}/webhooks/`)).toBe(true);
    expect((await split.waitForExecution(sent.headers.get('x-execution-id')!)).status).toBe('succeeded');
    // The OAuth callback is the main port's (an unknown state is a 400, not a 404).
    expect(await status(`${split.url}/oauth/callback?code=c&state=s`)).toBe(400);
  });

  it('the admin port serves the console, /api and /metrics, and no caller-controlled answer', async () => {
    expect(await status(`${split.adminUrl}/api/integrations`, { headers: auth })).toBe(200);
    expect(await status(`${split.adminUrl}/console/sign-in`)).toBe(200);
    expect(await status(`${split.adminUrl}/metrics`)).toBe(200);
    expect(await status(`${split.adminUrl}/healthz`)).toBe(200);
    expect(await status(`${split.adminUrl}/`)).toBe(302);
    const token = split.urls('echo').live.split('/webhooks/')[1];
    expect(await status(`${split.adminUrl}/webhooks/${token}`, { method: 'POST', body: '{}' })).toBe(404);
    expect(await status(`${split.adminUrl}/oauth/callback?code=c&state=s`)).toBe(404);
  });

  it('an absolute-form target reaches no operator route on the main port', async () => {
    const answer = await rawRequest(
      split.port,
      `GET http://127.0.0.1:${split.adminPort}/api/integrations HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN}`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 404 /);
  });

  it('CLI commands find the admin port through HCM_RUNNER_ADMIN_PORT', { timeout: 60_000 }, async () => {
    const env = { ...process.env, HCM_RUNNER_ADMIN_TOKEN: ADMIN, HCM_RUNNER_ADMIN_PORT: String(split.adminPort), HCM_RUNNER_PUBLIC_URL: split.url };
    const { stdout } = await run(process.execPath, [join(root, 'bin', 'hcm-runner.js'), 'urls', 'echo'], { cwd: root, env });
    expect(stdout).toContain(split.urls('echo').live);
  });

  it('`serve` prints both addresses and lists the flags in --help', { timeout: 60_000 }, async () => {
    const [port, adminPort] = [await freePort(), await freePort()];
    const served = spawnServe([
      '--dir',
      join(root, 'test', 'fixtures', 'server', 'main'),
      '--port',
      String(port),
      '--admin-port',
      String(adminPort),
      '--data',
      join(split.data.path, 'child'),
    ]);
    const banner = await poll(async () => (served.output().includes('console:') ? served.output() : undefined), 30_000);
    expect(banner).toContain(`hcm-runner listening on http://127.0.0.1:${port}`);
    expect(banner).toContain(`admin (console, /api, /metrics) on http://127.0.0.1:${adminPort}`);
    expect(banner).toContain(`console: http://127.0.0.1:${adminPort}/console/`);
    expect(await status(`http://127.0.0.1:${port}/api/integrations`, { headers: auth })).toBe(404);
    expect(await status(`http://127.0.0.1:${adminPort}/api/integrations`, { headers: auth })).toBe(200);
    served.child.kill('SIGTERM');

    const { stdout } = await run(process.execPath, [join(root, 'bin', 'hcm-runner.js'), 'serve', '--help'], { cwd: root });
    expect(stdout).toContain('--admin-port N');
    expect(stdout).toContain('--admin-host H');
  });
});

describe('absolute-form request targets', () => {
  it('are routed like origin-form ones', async () => {
    const live = new URL(single.urls('echo').live);
    const answer = await rawRequest(
      single.port,
      `POST http://${live.host}${live.pathname}?via=absolute HTTP/1.1\r\nHost: ${live.host}\r\nContent-Type: application/json`,
      '{"absolute":true}',
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    const id = /x-execution-id: (\S+)/i.exec(answer)?.[1];
    expect(id).toBeTruthy();
    const record = await single.waitForExecution(id!);
    expect(record.trigger.body.data).toEqual({ absolute: true });
    expect(record.trigger.queryParameters).toEqual({ via: 'absolute' });
  });
});

/**
 * The outbound policy of core.http: a URL taken from a webhook payload must not reach the cloud
 * metadata service, link-local addresses, or — unless the operator allows it — loopback and
 * private networks.
 *
 * End to end (a real server, core.http steps), only loopback is ever the target: were the policy
 * broken, a test aimed at 169.254.169.254 or 10.0.0.1 would send real packets off this machine.
 * So the wiring is proven with every spelling of loopback (refused without the flag, reached with
 * it: a counting fake on 127.0.0.1 shows whether a call arrived), and the decisions for the other
 * ranges with the very functions the connector calls (hostRefusal, refusalReason).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyAddress, hostRefusal, refusalReason } from '../../src/connectors/outbound-policy.js';
import { bin, cliAsync, repoRoot } from '../helpers/cli.js';
import { freePort } from '../helpers/net.js';
import { ADMIN, poll, startTestServer, tempDir, type TestServer } from '../server/helpers.js';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'outbound');
const FLAG = /--allow-private-network, or set HCM_RUNNER_ALLOW_PRIVATE_NETWORK=1/;

let fake: Server;
let port: number;
let hits = 0;
let strict: TestServer;
let open: TestServer;

beforeAll(async () => {
  fake = createServer((_req, res) => {
    hits++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"reached":true}');
  });
  await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
  port = (fake.address() as AddressInfo).port;
  strict = await startTestServer({ dir: fixtures, allowPrivateNetwork: false });
  // The environment switch, as `serve` reads it when no flag is given.
  open = await startTestServer({ dir: fixtures, allowPrivateNetwork: undefined, env: { HCM_RUNNER_ALLOW_PRIVATE_NETWORK: '1' } });
});

afterAll(async () => {
  await strict?.stop();
  await open?.stop();
  await new Promise((r) => fake?.close(r));
});

async function fetchVia(server: TestServer, url: string): Promise<{ status: number; body: any }> {
  const res = await fetch(server.urls('fetch').live, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url }),
  });
  return { status: res.status, body: await res.json() };
}

async function refused(server: TestServer, url: string): Promise<string> {
  const before = hits;
  const res = await fetchVia(server, url);
  expect(res.status, JSON.stringify(res.body)).toBe(500);
  expect(hits, 'the fake was reached').toBe(before);
  // Refusals are final: the step is not retried (maxRetryCount: 2 in the fixture).
  const rec = (await server.api('GET', `/executions/${res.body.executionId}`)).body;
  expect(rec.steps[0].error.code).toBe('outbound_refused');
  expect(JSON.stringify(rec.log)).not.toMatch(/retry 1 of/);
  return res.body.error as string;
}

describe('without --allow-private-network', () => {
  it('a loopback address is refused, naming the address and the flag; nothing reaches it', async () => {
    const error = await refused(strict, `http://127.0.0.1:${port}/x`);
    expect(error).toMatch(/step call/);
    expect(error).toContain('127.0.0.1 is a loopback address');
    expect(error).toMatch(FLAG);
  });

  it('a name is judged by the address it resolves to, at connect time (localhost)', async () => {
    const error = await refused(strict, `http://localhost:${port}/x`);
    expect(error).toMatch(/refused to connect to localhost: (127\.0\.0\.1|::1) is a loopback address/);
  });

  it('IPv4-mapped IPv6, decimal and 0.0.0.0 spellings of loopback are refused too', async () => {
    expect(await refused(strict, `http://[::ffff:127.0.0.1]:${port}/x`)).toContain('(IPv4 127.0.0.1) is a loopback address');
    expect(await refused(strict, `http://2130706433:${port}/x`)).toContain('127.0.0.1 is a loopback address');
    expect(await refused(strict, `http://0.0.0.0:${port}/x`)).toContain('0.0.0.0 is a loopback address');
    expect(await refused(strict, `http://[::1]:${port}/x`)).toContain('::1 is a loopback address');
  });
});

describe('with private networks allowed', () => {
  it('loopback is reached (HCM_RUNNER_ALLOW_PRIVATE_NETWORK=1)', async () => {
    const before = hits;
    const res = await fetchVia(open, `http://localhost:${port}/x`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.body).toEqual({ reached: true });
    expect(hits).toBe(before + 1);
  });
});

describe('the decisions the connector makes (no traffic)', () => {
  it('classifies addresses, IPv4 inside IPv6 included', () => {
    const table: Record<string, string> = {
      '127.0.0.1': 'loopback',
      '127.255.0.9': 'loopback',
      '0.0.0.0': 'loopback',
      '::1': 'loopback',
      '::': 'loopback',
      '::ffff:127.0.0.1': 'loopback',
      '10.0.0.1': 'private',
      '172.16.5.4': 'private',
      '172.31.255.255': 'private',
      '192.168.1.1': 'private',
      '100.64.0.1': 'private',
      'fd12::1': 'private',
      'fc00::1': 'private',
      '::ffff:10.1.2.3': 'private',
      '169.254.10.20': 'link-local',
      'fe80::1': 'link-local',
      'FE80::abcd': 'link-local',
      '169.254.169.254': 'metadata',
      'fd00:ec2::254': 'metadata',
      '::ffff:169.254.169.254': 'metadata',
      '64:ff9b::a9fe:a9fe': 'metadata',
      '100.100.100.200': 'metadata',
      '172.32.0.1': 'public',
      '8.8.8.8': 'public',
      '2606:4700::1111': 'public',
      '11.0.0.1': 'public',
    };
    for (const [ip, kind] of Object.entries(table)) expect(classifyAddress(ip), ip).toBe(kind);
  });

  it('refuses metadata and link-local whatever the setting; private and loopback only without it', () => {
    for (const allow of [false, true]) {
      expect(hostRefusal('169.254.169.254', allow)).toBe('169.254.169.254 is a cloud metadata address; core.http never connects to it');
      expect(hostRefusal('[fd00:ec2::254]', allow)).toMatch(/cloud metadata address/);
      expect(hostRefusal('metadata.google.internal', allow)).toBe(
        'metadata.google.internal is a cloud metadata service; core.http never connects to it',
      );
      expect(hostRefusal('METADATA.google.internal.', allow)).toMatch(/cloud metadata service/);
      expect(hostRefusal('169.254.10.20', allow)).toMatch(/link-local address; core\.http never connects/);
      expect(hostRefusal('[fe80::1]', allow)).toMatch(/link-local/);
      expect(refusalReason('169.254.169.254', allow)).not.toMatch(FLAG);
    }
    for (const ip of ['10.0.0.1', '[fd12::1]', '127.0.0.1', '[::ffff:192.168.0.1]']) {
      expect(hostRefusal(ip, false), ip).toMatch(FLAG);
      expect(hostRefusal(ip, true), ip).toBeUndefined();
    }
    // Names other than the metadata ones are judged after the lookup, by their addresses.
    expect(hostRefusal('example.com', false)).toBeUndefined();
    expect(hostRefusal('8.8.8.8', false)).toBeUndefined();
  });
});

describe('the command line', () => {
  async function serveAndCall(args: string[]): Promise<{ status: number; body: any }> {
    const data = tempDir('hcm-outbound-');
    const serverPort = await freePort();
    const child = spawn(process.execPath, [bin, 'serve', '--dir', fixtures, '--port', String(serverPort), '--data', data.path, ...args], {
      cwd: repoRoot,
      env: { ...process.env, HCM_RUNNER_ADMIN_TOKEN: ADMIN, HCM_RUNNER_ALLOW_PRIVATE_NETWORK: '' },
      stdio: 'ignore',
    });
    try {
      const base = `http://127.0.0.1:${serverPort}`;
      await poll(async () => ((await fetch(`${base}/healthz`).catch(() => undefined))?.status === 200 ? true : undefined), 30_000, 100);
      const list = await (await fetch(`${base}/api/integrations`, { headers: { authorization: `Bearer ${ADMIN}` } })).json();
      const res = await fetch(list[0].webhookUrls.live, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ url: `http://127.0.0.1:${port}/cli` }),
      });
      return { status: res.status, body: await res.json() };
    } finally {
      child.kill('SIGKILL');
      await new Promise((r) => child.once('close', r));
      data.remove();
    }
  }

  it('serve refuses loopback by default, allows it with --allow-private-network and with --sandbox', async () => {
    const refusedByDefault = await serveAndCall([]);
    expect(refusedByDefault.status).toBe(500);
    expect(refusedByDefault.body.error).toMatch(FLAG);
    expect((await serveAndCall(['--allow-private-network'])).status).toBe(200);
    expect((await serveAndCall(['--sandbox'])).status).toBe(200);
  }, 60_000);

  it('run (local development) allows loopback', async () => {
    const dir = tempDir('hcm-outbound-run-');
    try {
      const payload = join(dir.path, 'payload.json');
      writeFileSync(payload, JSON.stringify({ url: `http://127.0.0.1:${port}/run` }));
      const ok = await cliAsync(['run', join(fixtures, 'fetch.yaml'), '--payload', payload, '--data', dir.path]);
      expect(ok.code, ok.stderr).toBe(0);
      expect(JSON.parse(ok.stdout).result.body).toEqual({ reached: true });
    } finally {
      dir.remove();
    }
  }, 60_000);
});

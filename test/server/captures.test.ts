/**
 * Listening-mode captures are bounded (docs/security.md "Listening-mode captures"): stored cut past
 * HCM_RUNNER_CAPTURE_MAX_BYTES with the full size kept, at most HCM_RUNNER_CAPTURE_KEEP per
 * integration, summaries on the live stream and in `?summary=true` lists, one capture in full by
 * id; `hcm-runner listen` polls summaries; payload names are checked when saved.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, poll, root, startTestServer, type TestServer } from './helpers.js';

const MAX = 100_000;
const KEEP = 3;
let s: TestServer;

beforeAll(async () => {
  s = await startTestServer({ env: { HCM_RUNNER_CAPTURE_MAX_BYTES: String(MAX), HCM_RUNNER_CAPTURE_KEEP: String(KEEP) } });
  expect((await s.api('POST', '/integrations/echo/listen')).status).toBe(200);
});
afterAll(async () => {
  await s?.stop();
});

const send = async (body: unknown) => {
  const res = await fetch(s.urls('echo').test, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  await res.arrayBuffer();
  return res.headers.get('x-execution-id')!;
};
const big = (n: number, tag: string) => ({ tag, blob: 'b'.repeat(n) });

describe('bounded captures over the admin API', () => {
  it('stores a large request cut to the setting with its full size; lists carry at most 64 KiB; the full capture by id', async () => {
    await send(big(1024 * 1024, 'large'));
    const summaries = (await s.api('GET', '/integrations/echo/captures?summary=true&limit=1')).body;
    expect(summaries).toHaveLength(1);
    const [summary] = summaries;
    expect(summary).not.toHaveProperty('trigger');
    expect(summary).toMatchObject({ integration: 'echo', method: 'POST', path: '/', contentType: 'application/json', truncated: true });
    expect(summary.size).toBeGreaterThan(1024 * 1024);
    expect(summary.preview).toMatch(/^\{"tag":"large","blob":"bbb/);
    expect(JSON.stringify(summary).length).toBeLessThan(2048);

    const [listed] = (await s.api('GET', '/integrations/echo/captures?limit=1')).body;
    expect(listed.id).toBe(summary.id);
    expect(Buffer.byteLength(JSON.stringify(listed.trigger))).toBeLessThanOrEqual(64 * 1024);

    const full = await s.api('GET', `/integrations/echo/captures/${summary.id}`);
    expect(full.status).toBe(200);
    expect(full.body).toMatchObject({ id: summary.id, size: summary.size, truncated: true });
    const stored = Buffer.byteLength(JSON.stringify(full.body.trigger));
    expect(stored).toBeLessThanOrEqual(MAX);
    expect(stored).toBeGreaterThan(MAX - 1024);
    expect(full.body.trigger.body).toMatchObject({ contentType: 'application/json', truncated: true });
    expect(full.body.trigger.body.preview).toMatch(/^\{"tag":"large","blob":"bbb/);
    expect(full.body.trigger.method).toBe('POST');

    // A cut capture cannot become a payload (it would run with a preview for a body).
    const refused = await s.api('POST', '/integrations/echo/payloads', { name: 'too-big', captureId: summary.id });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toContain('HCM_RUNNER_CAPTURE_MAX_BYTES');
    expect((await s.api('GET', '/integrations/echo/captures/not-a-capture')).status).toBe(404);
  });

  it('keeps at most HCM_RUNNER_CAPTURE_KEEP captures; after=ID lists only newer ones', async () => {
    const before = (await s.api('GET', '/integrations/echo/captures?summary=true&limit=1')).body[0].id;
    for (let i = 0; i < KEEP + 2; i++) await send({ n: i });
    const all = (await s.api('GET', '/integrations/echo/captures?summary=true&limit=50')).body;
    expect(all.map((c: { preview: string }) => c.preview)).toEqual(['{"n":4}', '{"n":3}', '{"n":2}']);
    const newer = (await s.api('GET', `/integrations/echo/captures?summary=true&after=${all[2].id}`)).body;
    expect(newer.map((c: { id: string }) => c.id)).toEqual([all[0].id, all[1].id]);
    // The capture `before` was dropped: after it is everything kept.
    expect((await s.api('GET', `/integrations/echo/captures?summary=true&after=${before}`)).body).toHaveLength(KEEP);
    expect((await s.api('GET', `/integrations/echo/captures?after=${all[2].id}`)).status).toBe(400);
  });

  it('the live stream sends each capture as a summary, never its body', async () => {
    const res = await fetch(`${s.url}/api/integrations/echo/captures/stream`, {
      headers: { authorization: `Bearer ${ADMIN}`, accept: 'text/event-stream' },
    });
    const reader = res.body!.getReader();
    let text = '';
    const readUntil = async (pattern: RegExp) => {
      while (!pattern.test(text)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended: ${text}`);
        text += Buffer.from(value).toString();
      }
    };
    await readUntil(/event: ready/);
    await send(big(512 * 1024, 'streamed'));
    await readUntil(/event: capture\ndata: .*\n\n/);
    await reader.cancel();
    const data = JSON.parse(/event: capture\ndata: (.*)\n/.exec(text)![1]!);
    expect(data).toMatchObject({ integration: 'echo', method: 'POST', truncated: true });
    expect(data).not.toHaveProperty('trigger');
    expect(text.length).toBeLessThan(4096);
  });

  it('refuses the settings when they are not whole numbers of at least 1', async () => {
    await expect(startTestServer({ env: { HCM_RUNNER_CAPTURE_KEEP: '0' } })).rejects.toThrow(/HCM_RUNNER_CAPTURE_KEEP/);
    await expect(startTestServer({ env: { HCM_RUNNER_CAPTURE_MAX_BYTES: '1MB' } })).rejects.toThrow(/HCM_RUNNER_CAPTURE_MAX_BYTES/);
  });
});

describe('payload names', () => {
  it('are refused at save time unless they are safe in URLs, with a message that says what to use', async () => {
    for (const name of ['..', '.', 'a/b', 'x?y', '<b>', ' padded ', 'é', 'n'.repeat(101)]) {
      const r = await s.api('POST', '/integrations/echo/payloads', { name, payload: { n: 1 } });
      expect(r.status, name).toBe(400);
      expect(r.body.error, name).toContain('letters, digits');
    }
    for (const name of ['order created', 'v1.2_final-B', 'n'.repeat(100), '...']) {
      expect((await s.api('POST', '/integrations/echo/payloads', { name, payload: { n: 1 } })).status, name).toBe(201);
    }
  });
});

describe('hcm-runner listen', () => {
  let child: ChildProcess | undefined;
  afterAll(() => {
    child?.kill('SIGKILL');
  });

  it('polls summaries (a few hundred bytes per new capture, however large); --show prints the stored capture', { timeout: 60_000 }, async () => {
    // Counts what the server sends the CLI, through a pass-through proxy on loopback.
    let received = 0;
    const target = new URL(s.url);
    const proxy: Server = createServer((req, res) => {
      const up = httpRequest({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (ur) => {
        res.writeHead(ur.statusCode ?? 502, ur.headers);
        ur.on('data', (c: Buffer) => (received += c.length));
        ur.pipe(res);
      });
      req.pipe(up);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    try {
      const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
      const c = spawn(process.execPath, [join(root, 'bin', 'hcm-runner.js'), 'listen', 'echo', '--interval', '100', '--server', proxyUrl], {
        env: { ...process.env, HCM_RUNNER_ADMIN_TOKEN: ADMIN },
      });
      child = c;
      let out = '';
      c.stdout!.on('data', (d) => (out += d));
      c.stderr!.on('data', (d) => (out += d));
      await poll(async () => (out.includes('Ctrl-C stops') ? true : undefined));
      // Earlier (large) captures are kept on the server; each poll must not carry them.
      await send(big(80 * 1024, 'one'));
      await send(big(80 * 1024, 'two'));
      await poll(async () => (/"tag":"two"/.test(out) ? true : undefined));
      const start = received;
      await new Promise((r) => setTimeout(r, 1500));
      // ~15 polls with nothing new: each an empty list.
      expect(received - start).toBeLessThan(4096);
      expect(out).toMatch(/POST \/ {2}\d\d:\d\d:\d\d {2}\d+ B {2}\{"tag":"one","blob":"bbb/);
      expect(out).toContain('save it: npx hcm-runner payloads save echo PAYLOAD_NAME --capture');
      c.kill('SIGINT');
      await new Promise((r) => c.once('close', r));
      child = undefined;
      expect(out).toContain('listening mode off');

      // --show: the capture in full (as stored).
      const shown = spawn(
        process.execPath,
        [join(root, 'bin', 'hcm-runner.js'), 'listen', 'echo', '--show', '--interval', '100', '--server', s.url],
        {
          env: { ...process.env, HCM_RUNNER_ADMIN_TOKEN: ADMIN },
        },
      );
      child = shown;
      let shownOut = '';
      shown.stdout!.on('data', (d) => (shownOut += d));
      await poll(async () => (shownOut.includes('Ctrl-C stops') ? true : undefined));
      await send({ tag: 'shown', nested: { deep: [1, 2] } });
      await poll(async () => (shownOut.includes('"deep": [') ? true : undefined));
      shown.kill('SIGINT');
      await new Promise((r) => shown.once('close', r));
      child = undefined;
    } finally {
      await new Promise<void>((r) => proxy.close(() => r()));
    }
  });

  it('payloads save refuses a bad name before calling the server (exit 2)', async () => {
    const c = spawn(process.execPath, [join(root, 'bin', 'hcm-runner.js'), 'payloads', 'save', 'echo', '..', '--capture', 'x', '--server', s.url], {
      env: { ...process.env, HCM_RUNNER_ADMIN_TOKEN: ADMIN },
    });
    let err = '';
    c.stderr!.on('data', (d) => (err += d));
    const code = await new Promise((r) => c.once('close', r));
    expect(code).toBe(2);
    expect(err).toContain('payload name ".." is not allowed');
  });
});

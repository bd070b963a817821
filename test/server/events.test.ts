/** Live streams of the admin API (server-sent events) and GET /api/connections. */
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { sandboxEnv } from '../helpers/sandbox-env.js';
import { ADMIN, root, startTestServer, type TestServer } from './helpers.js';

let s: TestServer;
let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox({ port: 0, quiet: true });
  // The console's fixtures: webhooks, a schedule, two OAuth connections (one with a refresh token).
  s = await startTestServer({ dir: join(root, 'test', 'fixtures', 'console'), env: sandboxEnv(sb, { refreshToken: sb.issueRefreshToken() }) });
});
afterAll(async () => {
  await s?.stop();
  await sb?.close();
});

interface SseEvent {
  event: string;
  data: any;
}

/** Opens an SSE stream and reads events one by one; `next()` resolves with the next event. */
async function openStream(path: string): Promise<{ next(): Promise<SseEvent>; close(): void }> {
  const controller = new AbortController();
  const res = await fetch(`${s.url}${path}`, {
    headers: { authorization: `Bearer ${ADMIN}`, accept: 'text/event-stream' },
    signal: controller.signal,
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/event-stream');
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  return {
    async next() {
      for (;;) {
        const end = buffer.indexOf('\n\n');
        if (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (block.startsWith(':')) continue; // heartbeat
          const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
          const data = block
            .split('\n')
            .filter((l) => l.startsWith('data: '))
            .map((l) => l.slice(6))
            .join('\n');
          return { event, data: JSON.parse(data) };
        }
        const { value, done } = await reader.read();
        if (done) throw new Error('stream ended');
        buffer += value;
      }
    },
    close: () => controller.abort(),
  };
}

const post = (url: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('GET /api/events', () => {
  it('needs the admin token', async () => {
    expect((await fetch(`${s.url}/api/events`)).status).toBe(401);
  });

  it('streams an execution as it is queued, runs and finishes; ?integration= filters', async () => {
    const all = await openStream('/api/events');
    const other = await openStream('/api/events?integration=hourly');
    expect((await all.next()).event).toBe('ready');
    expect((await other.next()).event).toBe('ready');

    const res = await post(s.urls('worker-lookup').live, { workerId: 'Employee_ID=21001' });
    const id = res.headers.get('x-execution-id');
    const seen: string[] = [];
    while (!seen.includes('succeeded') && !seen.includes('failed')) {
      const e = await all.next();
      expect(e.event).toBe('execution');
      expect(e.data).toMatchObject({ id, integration: 'worker-lookup', test: false, attempt: 1, at: expect.any(String) });
      seen.push(e.data.status);
    }
    expect(seen).toEqual(['queued', 'running', 'succeeded']);

    // The filtered stream saw none of it: its next event is the hourly run started now.
    expect((await s.api('POST', '/integrations/hourly/run')).status).toBe(200);
    expect((await other.next()).data).toMatchObject({ integration: 'hourly', status: 'queued' });
    all.close();
    other.close();
  });

  it('an unknown integration in the filter is a 404', async () => {
    expect((await s.api('GET', '/events?integration=nope')).status).toBe(404);
  });
});

describe('GET /api/integrations/{name}/captures/stream', () => {
  it('streams a summary of each captured test-URL request while listening (never its body)', async () => {
    expect((await s.api('POST', '/integrations/worker-lookup/listen')).status).toBe(200);
    const stream = await openStream('/api/integrations/worker-lookup/captures/stream');
    expect((await stream.next()).event).toBe('ready');
    expect((await post(s.urls('worker-lookup').test, { workerId: 'Employee_ID=21002' })).status).toBe(200);
    const e = await stream.next();
    expect(e.event).toBe('capture');
    expect(e.data).toMatchObject({ id: expect.any(String), integration: 'worker-lookup', receivedAt: expect.any(String) });
    expect(e.data).toMatchObject({ method: 'POST', path: '/', truncated: false, preview: '{"workerId":"Employee_ID=21002"}' });
    expect(e.data).not.toHaveProperty('trigger');
    // The same capture is what GET …/captures lists, and its body is read by id.
    expect((await s.api('GET', '/integrations/worker-lookup/captures?summary=true')).body[0]).toEqual(e.data);
    expect((await s.api('GET', `/integrations/worker-lookup/captures/${e.data.id}`)).body.trigger.body.data).toEqual({
      workerId: 'Employee_ID=21002',
    });
    stream.close();
    await s.api('DELETE', '/integrations/worker-lookup/listen');
  });
});

describe('a reader that does not read', () => {
  it('is let go once its stream holds too much, instead of piling events up in memory', async () => {
    expect((await s.api('POST', '/integrations/worker-lookup/listen')).status).toBe(200);
    // A raw connection that asks for the capture stream and then reads nothing: what the server
    // sends fills the socket buffers, then waits in the server.
    const url = new URL(s.url);
    const socket = connect(Number(url.port), url.hostname);
    await new Promise<void>((r) => socket.once('connect', () => r()));
    socket.write(
      `GET /api/integrations/worker-lookup/captures/stream HTTP/1.1\r\nhost: ${url.host}\r\nauthorization: Bearer ${ADMIN}\r\naccept: text/event-stream\r\n\r\n`,
    );
    socket.pause();
    await new Promise((r) => setTimeout(r, 200));
    // 24 events of ~2 MB each: ~48 MB, far past the socket buffers and the limit. Real capture
    // events are summaries of a few hundred bytes, so the test sends large ones itself.
    const filler = 'x'.repeat(2 * 1024 * 1024);
    for (let i = 0; i < 24; i++) {
      s.runtime.emit('capture', {
        id: `big-${i}`,
        integration: 'worker-lookup',
        receivedAt: new Date().toISOString(),
        size: filler.length,
        truncated: true,
        preview: filler,
      });
      await new Promise((r) => setTimeout(r, 10));
    }
    // Now read: the stream ends (the server let it go) after fewer events than were captured.
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.resume();
    await new Promise<void>((r) => socket.once('end', () => r()));
    const captures = received.split('event: capture').length - 1;
    expect(captures).toBeGreaterThan(0);
    expect(captures).toBeLessThan(24);
    socket.destroy();
    await s.api('DELETE', '/integrations/worker-lookup/listen');
  }, 60_000);
});

describe('shutdown', () => {
  it('ends open streams, so the server closes without waiting out its grace period', async () => {
    const other = await startTestServer({ shutdownGraceMs: 60_000 });
    const res = await fetch(`${other.url}/api/events`, { headers: { authorization: `Bearer ${ADMIN}` } });
    // Not kept alive after the stream: the socket closes with it.
    expect(res.headers.get('connection')).toBe('close');
    const reader = res.body!.getReader();
    await reader.read(); // ready
    const ended = (async () => {
      for (;;) if ((await reader.read()).done) return true;
    })();
    // A 60 s grace period: without the stream ending, this would outlast the test's timeout.
    await other.close();
    expect(await ended).toBe(true);
    other.data.remove();
  });
});

describe('GET /api/connections', () => {
  it('lists each OAuth connection with its state and never a token', async () => {
    const r = await s.api('GET', '/connections');
    expect(r.status).toBe(200);
    const byIntegration = Object.fromEntries(r.body.map((c: { integration: string }) => [c.integration, c]));
    expect(byIntegration['worker-lookup']).toMatchObject({ connection: 'hcm', type: 'hcm-oauth2', state: 'authorized' });
    expect(byIntegration.workers).toEqual({ integration: 'workers', connection: 'hcm', type: 'hcm-oauth2', state: 'needs authorization' });
    expect(JSON.stringify(r.body)).not.toMatch(/sandbox-secret|accessToken|refresh_token/);
  });
});

describe('GET /api/integrations/{name}', () => {
  it('adds the trigger settings and the steps in order', async () => {
    const r = await s.api('GET', '/integrations/worker-lookup');
    expect(r.body.trigger).toEqual({ type: 'webhook', methods: ['POST'], response: 'async' });
    expect(r.body.steps).toEqual([
      { id: 'worker', action: 'hcm.getStaffingWorkerById' },
      { id: 'profile', action: 'core.transform' },
    ]);
    expect((await s.api('GET', '/integrations/hourly')).body.trigger).toMatchObject({ type: 'schedule', every: '1h', timezone: expect.any(String) });
  });
});

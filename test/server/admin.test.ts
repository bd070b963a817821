/** The admin API, health and metrics (docs/server.md): auth, integrations, runs, listening mode, payloads, replay. */
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtures, startTestServer, tempDir, type TestServer } from './helpers.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.stop();
});

describe('health, metrics, auth', () => {
  it('GET /healthz → 200 {"status":"ok"} without a token', async () => {
    const res = await fetch(`${s.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('/api/* without or with a wrong token → 401 JSON', async () => {
    for (const token of [null, 'wrong']) {
      const r = await s.api('GET', '/integrations', undefined, token);
      expect(r.status).toBe(401);
      expect(typeof r.body.error).toBe('string');
    }
    const r = await s.api('POST', '/integrations/echo/run', { a: 1 }, null);
    expect(r.status).toBe(401);
  });

  it('GET /metrics exposes request, execution, queue and step metrics', async () => {
    const res = await fetch(s.urls('echo').live, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    await s.waitForExecution(res.headers.get('x-execution-id')!);
    const text = await (await fetch(`${s.url}/metrics`)).text();
    expect(text).toMatch(/hcm_runner_http_requests_total\{route="\/webhooks\/:token",method="POST",status="200"\} \d+/);
    expect(text).toMatch(/hcm_runner_executions_total\{integration="echo",status="succeeded"\} \d+/);
    expect(text).toMatch(/hcm_runner_queue_depth \d+/);
    expect(text).toMatch(/hcm_runner_step_duration_seconds_bucket\{le="[^"]+",action="core.transform",status="succeeded"\} \d+/);
  });
});

describe('integrations', () => {
  it('GET /api/integrations lists every file with its status; files with problems have errors', async () => {
    const r = await s.api('GET', '/integrations');
    expect(r.status).toBe(200);
    const byName = Object.fromEntries(r.body.map((v: { name: string }) => [v.name, v]));
    expect(byName.echo).toEqual({
      name: 'echo',
      file: expect.stringMatching(/echo\.yaml$/),
      enabled: true,
      status: 'ok',
      trigger: { type: 'webhook' },
      webhookUrls: s.urls('echo'),
    });
    expect(byName.nightly).toMatchObject({ status: 'ok', trigger: { type: 'schedule' } });
    expect(byName.nightly.webhookUrls).toBeUndefined();
    expect(byName.disabled.enabled).toBe(false);
    expect(byName.broken.status).toBe('error');
    expect(byName.broken.errors[0]).toEqual({
      file: expect.stringMatching(/broken\.yaml$/),
      line: 6,
      column: expect.any(Number),
      message: expect.stringContaining('core.nope'),
      path: expect.any(String),
    });
  });

  it("serve reports an env value that is missing (no default) as the integration's error", async () => {
    const r = await s.api('GET', '/integrations/needs-env');
    expect(r.body.status).toBe('error');
    expect(r.body.errors).toEqual([
      {
        file: expect.stringMatching(/needs-env\.yaml$/),
        line: 4,
        column: expect.any(Number),
        message: expect.stringContaining('HCM_RUNNER_TEST_SURELY_UNSET'),
        path: '/config/apiKey',
      },
    ]);
  });

  it('GET /api/integrations/{name} → one of them; unknown → 404', async () => {
    const r = await s.api('GET', '/integrations/echo');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ name: 'echo', status: 'ok', trigger: { type: 'webhook' } });
    expect((await s.api('GET', '/integrations/nope')).status).toBe(404);
  });

  it('POST /api/integrations/{name}/run runs it with a JSON payload → {executionId}', async () => {
    const r = await s.api('POST', '/integrations/echo/run', { workerId: 'W-9' });
    expect(r.status).toBe(200);
    const record = await s.waitForExecution(r.body.executionId);
    expect(record.status).toBe('succeeded');
    expect(record.result.body.data).toEqual({ workerId: 'W-9' });
    expect(record.result.executionId).toBe(r.body.executionId);
  });

  it('an integration with errors and no good version cannot run → 409', async () => {
    const r = await s.api('POST', '/integrations/broken/run', {});
    expect(r.status).toBe(409);
  });
});

describe('executions', () => {
  it('lists newest first with filters; GET one; 404 for unknown; 400 for a bad status', async () => {
    const a = (await s.api('POST', '/integrations/sync-fail/run', { what: 'x' })).body.executionId;
    await s.waitForExecution(a);
    const b = (await s.api('POST', '/integrations/sync-fail/run', { what: 'y' })).body.executionId;
    await s.waitForExecution(b);
    const list = await s.api('GET', '/executions?integration=sync-fail&status=failed&limit=2');
    expect(list.status).toBe(200);
    expect(list.body.map((e: { id: string }) => e.id)).toEqual([b, a]);
    expect(list.body[0]).toMatchObject({ integration: 'sync-fail', status: 'failed' });
    expect((await s.api('GET', '/executions?integration=sync-fail&status=succeeded')).body).toEqual([]);
    expect((await s.api('GET', '/executions?status=weird')).status).toBe(400);
    expect((await s.api('GET', '/executions/does-not-exist')).status).toBe(404);
  });

  it('POST /api/executions/{id}/replay → a new execution with the same trigger data', async () => {
    const res = await fetch(`${s.urls('echo').live}/r?k=v`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"again":true}',
    });
    const original = await s.waitForExecution(res.headers.get('x-execution-id')!);
    const r = await s.api('POST', `/executions/${original.id}/replay`);
    expect(r.status).toBe(200);
    expect(r.body.executionId).not.toBe(original.id);
    const replayed = await s.waitForExecution(r.body.executionId);
    expect(replayed.status).toBe('succeeded');
    expect(replayed.trigger.body).toEqual(original.trigger.body);
    expect(replayed.trigger.pathFragment).toBe('r');
    expect(replayed.trigger.queryParameters).toEqual({ k: 'v' });
    expect((await s.api('POST', '/executions/nope/replay')).status).toBe(404);
  });
});

describe('listening mode and saved payloads', () => {
  it('listen → capture → save → edit → run', async () => {
    const urls = s.urls('echo');
    // Not listening: nothing captured.
    await fetch(urls.test, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"before":1}' });
    expect((await s.api('POST', '/integrations/echo/listen')).body).toMatchObject({ listening: true, testUrl: urls.test });
    expect((await s.api('GET', '/integrations/echo')).body.listening).toBe(true);

    const sent = await fetch(`${urls.test}/cap?z=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-from': 'crm' },
      body: '{"employee":"E-1"}',
    });
    expect(sent.status).toBe(200);
    // Live URL requests are not captured.
    await fetch(urls.live, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"live":1}' });

    const captures = await s.api('GET', '/integrations/echo/captures');
    expect(captures.status).toBe(200);
    expect(captures.body).toHaveLength(1);
    const capture = captures.body[0];
    expect(capture.trigger.body.data).toEqual({ employee: 'E-1' });
    expect(capture.trigger.headers['x-from']).toBe('crm');

    expect((await s.api('DELETE', '/integrations/echo/listen')).body.listening).toBe(false);
    await fetch(urls.test, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"after":1}' });
    expect((await s.api('GET', '/integrations/echo/captures')).body).toHaveLength(1);

    const saved = await s.api('POST', '/integrations/echo/payloads', { name: 'new-hire', captureId: capture.id });
    expect(saved.status).toBe(201);
    expect(saved.body).toMatchObject({ integration: 'echo', name: 'new-hire' });
    const list = await s.api('GET', '/integrations/echo/payloads');
    expect(list.body.map((p: { name: string }) => p.name)).toContain('new-hire');

    const run1 = await s.api('POST', '/integrations/echo/payloads/new-hire/run');
    expect(run1.status).toBe(200);
    const rec1 = await s.waitForExecution(run1.body.executionId);
    expect(rec1.test).toBe(true);
    expect(rec1.result.body.data).toEqual({ employee: 'E-1' });
    expect(rec1.result.pathFragment).toBe('cap');
    expect(rec1.result.executionId).toBe(run1.body.executionId);

    // Configure payload: replace the body.
    const edited = { ...capture.trigger, body: { data: { employee: 'E-2' }, contentType: 'application/json' } };
    const put = await s.api('PUT', '/integrations/echo/payloads/new-hire', { trigger: edited });
    expect(put.status).toBe(200);
    const run2 = await s.api('POST', '/integrations/echo/payloads/new-hire/run');
    const rec2 = await s.waitForExecution(run2.body.executionId);
    expect(rec2.result.body.data).toEqual({ employee: 'E-2' });

    // A payload from a plain JSON body, and errors.
    expect((await s.api('POST', '/integrations/echo/payloads', { name: 'plain', payload: { n: 1 } })).status).toBe(201);
    const run3 = await s.api('POST', '/integrations/echo/payloads/plain/run');
    expect((await s.waitForExecution(run3.body.executionId)).result.body.data).toEqual({ n: 1 });
    expect((await s.api('POST', '/integrations/echo/payloads', { name: 'x', captureId: 'nope' })).status).toBe(404);
    expect((await s.api('POST', '/integrations/echo/payloads', { captureId: capture.id })).status).toBe(400);
    expect((await s.api('PUT', '/integrations/echo/payloads/missing', { payload: {} })).status).toBe(404);
    expect((await s.api('POST', '/integrations/echo/payloads/missing/run')).status).toBe(404);
  });
});

describe('reload', () => {
  it('POST /api/reload re-reads the folder; a broken edit keeps the last good version running', async () => {
    const dir = tempDir('hcm-reload-');
    cpSync(join(fixtures, 'main', 'echo.yaml'), join(dir.path, 'echo.yaml'));
    const r = await startTestServer({ dir: dir.path });
    try {
      const token = r.urls('echo').live;
      writeFileSync(join(dir.path, 'echo.yaml'), 'name: echo\ntrigger:\n  type: webhook\nsteps:\n  - id: x\n    action: core.nope\n');
      writeFileSync(
        join(dir.path, 'more.yaml'),
        'name: more\ntrigger:\n  type: webhook\nsteps:\n  - id: x\n    action: core.transform\n    inputs: { value: 1 }\n',
      );
      const reloaded = await r.api('POST', '/reload');
      expect(reloaded.status).toBe(200);
      const byName = Object.fromEntries(reloaded.body.map((v: { name: string }) => [v.name, v]));
      expect(byName.echo.status).toBe('error');
      expect(byName.echo.errors.length).toBeGreaterThan(0);
      expect(byName.more.status).toBe('ok');
      // The last good echo still answers on the same URL (tokens are stable).
      expect(r.urls('echo').live).toBe(token);
      const res = await fetch(token, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"still":"works"}' });
      expect(res.status).toBe(200);
      expect((await r.waitForExecution(res.headers.get('x-execution-id')!)).status).toBe('succeeded');
    } finally {
      await r.stop();
      dir.remove();
    }
  });
});

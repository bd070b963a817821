/**
 * OpenTelemetry tracing (docs/operations.md "Tracing"), end to end: a real `hcm-runner serve`
 * child process configured only by OTEL_* variables exports to an OTLP/HTTP receiver started
 * here; a webhook request with a W3C traceparent runs an integration that calls the HCM sandbox
 * and a fake on loopback. With tracing off, the SDK is never imported (an import hook logs every
 * @opentelemetry module the process resolves).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { freePort } from '../helpers/net.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { sandboxEnv } from '../helpers/sandbox-env.js';
import { ADMIN, killServeChildren, poll, root, spawnServe, tempDir } from '../server/helpers.js';

const fixtures = join(root, 'test', 'fixtures', 'tracing');
const importHook = pathToFileURL(join(fixtures, 'import-log.mjs')).href;
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_SPAN_ID = '00f067aa0ba902b7';

let sb: Sandbox;
let notify: { url: string; headers: IncomingHttpHeaders[]; close(): Promise<void> };
const cleanups: Array<() => unknown> = [];

beforeAll(async () => {
  sb = await startSandbox({ port: 0, quiet: true });
  const headers: IncomingHttpHeaders[] = [];
  const server: Server = createServer((req, res) => {
    headers.push(req.headers);
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  notify = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/notify`,
    headers,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
});

afterAll(async () => {
  killServeChildren();
  for (const f of cleanups) await f();
  await notify?.close();
  await sb?.close();
});

interface Served {
  base: string;
  importLog: string;
  output(): string;
  stop(): Promise<void>;
}

/** `serve` on the tracing fixtures, with `env` added, the import hook and the sandbox's connection. */
async function serve(env: Record<string, string>): Promise<Served> {
  const data = tempDir('hcm-tracing-');
  cleanups.push(data.remove);
  const importLog = join(data.path, 'imports.log');
  writeFileSync(importLog, '');
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const { child, output } = spawnServe(['--dir', join(fixtures, 'integrations'), '--port', String(port), '--data', join(data.path, 'data')], {
    ...sandboxEnv(sb, { refreshToken: sb.issueRefreshToken() }),
    NOTIFY_URL: notify.url,
    HCM_RUNNER_PUBLIC_URL: base,
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${importHook}`.trim(),
    IMPORT_LOG: importLog,
    ...env,
  });
  await poll(async () => ((await fetch(`${base}/healthz`).catch(() => undefined))?.status === 200 ? true : undefined), 30_000, 100).catch(
    (err: Error) => {
      throw new Error(`${err.message}\n--- serve output ---\n${output()}`);
    },
  );
  return {
    base,
    importLog,
    output,
    // SIGTERM: a graceful stop, which sends the spans still buffered.
    stop: () =>
      new Promise<void>((r) => {
        if (child.exitCode !== null) return r();
        child.once('exit', () => r());
        child.kill('SIGTERM');
      }),
  };
}

async function api(base: string, path: string): Promise<any> {
  const res = await fetch(`${base}/api${path}`, { headers: { authorization: `Bearer ${ADMIN}` } });
  expect(res.status, path).toBe(200);
  return res.json();
}

/** Sends the webhook (with `headers`) and waits for its execution to finish. */
async function runTraced(s: Served, headers: Record<string, string>): Promise<any> {
  const [view] = (await api(s.base, '/integrations')).filter((i: any) => i.name === 'traced');
  const res = await fetch(view.webhookUrls.live, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{}' });
  expect(res.status, s.output()).toBe(200);
  const { executionId } = (await res.json()) as { executionId: string };
  return poll(async () => {
    const r = await api(s.base, `/executions/${executionId}`);
    return r.status === 'succeeded' || r.status === 'failed' ? r : undefined;
  }, 20_000);
}

const byName = (spans: ReceivedSpan[], name: string) => spans.filter((s) => s.name === name);

/** Everything tracing promises about one run of `traced`, whichever encoding brought the spans. */
async function expectTrace(receiver: OtlpReceiver, record: any, sandboxRequestsBefore: number, notifyBefore: number) {
  const spans = await poll(async () => {
    const mine = receiver.spans.filter((s) => s.traceId === TRACE_ID);
    // execution + 3 steps + 3 HTTP requests (two to the sandbox, one to the fake)
    return mine.length >= 7 ? mine : undefined;
  }, 20_000);

  const [execution, ...moreExecutions] = byName(spans, 'execution traced');
  expect(moreExecutions).toEqual([]);
  expect(execution).toMatchObject({
    parentSpanId: PARENT_SPAN_ID,
    kind: 1,
    attributes: {
      'hcm_runner.integration': 'traced',
      'hcm_runner.execution_id': record.id,
      'hcm_runner.attempt': 1,
      'hcm_runner.status': 'succeeded',
    },
    resource: { 'service.name': 'hcm-runner' },
  });
  expect(execution!.status.code).not.toBe(2);

  const steps = Object.fromEntries(['worker', 'missing', 'notify'].map((id) => [id, byName(spans, `step ${id}`)[0]!]));
  for (const [id, action] of [
    ['worker', 'hcm.getStaffingWorkerById'],
    ['missing', 'hcm.getStaffingWorkerById'],
    ['notify', 'core.http'],
  ] as const) {
    expect(steps[id], `step ${id}`).toMatchObject({
      parentSpanId: execution!.spanId,
      attributes: {
        'hcm_runner.integration': 'traced',
        'hcm_runner.step': id,
        'hcm_runner.action': action,
        'hcm_runner.attempt': 1,
        'hcm_runner.execution_id': record.id,
      },
    });
  }
  expect(steps.worker!.status.code).not.toBe(2);
  expect(steps.missing!.status.code).toBe(2);
  expect(steps.missing!.status.message).toContain('404');

  const clients = spans.filter((s) => s.kind === 3);
  const childOf = (step: string) => clients.filter((c) => c.parentSpanId === steps[step]!.spanId);
  expect(childOf('worker')).toHaveLength(1);
  expect(childOf('worker')[0]).toMatchObject({ name: 'GET', attributes: { 'http.request.method': 'GET', 'http.response.status_code': 200 } });
  expect(String(childOf('worker')[0]!.attributes['url.full'])).toMatch(new RegExp(`^${sb.apiUrl}/`));
  expect(childOf('missing')).toHaveLength(1);
  expect(childOf('missing')[0]).toMatchObject({ attributes: { 'http.response.status_code': 404 }, status: { code: 2 } });
  expect(childOf('notify')).toHaveLength(1);
  expect(childOf('notify')[0]).toMatchObject({ name: 'POST', attributes: { 'http.response.status_code': 200, 'url.full': notify.url } });

  // The services called saw the trace: each request's traceparent names its own client span.
  const sandboxed = sb.requests.slice(sandboxRequestsBefore);
  expect(sandboxed.map((r) => r.headers.traceparent)).toEqual([
    `00-${TRACE_ID}-${childOf('worker')[0]!.spanId}-01`,
    `00-${TRACE_ID}-${childOf('missing')[0]!.spanId}-01`,
  ]);
  expect(notify.headers.slice(notifyBefore).map((h) => h.traceparent)).toEqual([`00-${TRACE_ID}-${childOf('notify')[0]!.spanId}-01`]);
}

describe('OpenTelemetry tracing', () => {
  it('exports execution, step and client spans over OTLP/HTTP protobuf (the default), continuing the caller traceparent', {
    timeout: 90_000,
  }, async () => {
    const receiver = await startOtlpReceiver();
    cleanups.push(() => receiver.close());
    const s = await serve({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '50' });
    const sandboxBefore = sb.requests.length;
    const notifyBefore = notify.headers.length;
    const record = await runTraced(s, { traceparent: `00-${TRACE_ID}-${PARENT_SPAN_ID}-01` });
    expect(record.status, JSON.stringify(record.error)).toBe('succeeded');
    expect(record.traceId).toBe(TRACE_ID);
    await expectTrace(receiver, record, sandboxBefore, notifyBefore);
    expect(receiver.contentTypes[0]).toBe('application/x-protobuf');
    // The control of the test below: with tracing on, the import hook does see the SDK.
    expect(readFileSync(s.importLog, 'utf8')).toContain('@opentelemetry/sdk-trace-base');
    await s.stop();
  });

  it('speaks http/json when OTEL_EXPORTER_OTLP_PROTOCOL says so, names the service OTEL_SERVICE_NAME, ignores a bad traceparent', {
    timeout: 90_000,
  }, async () => {
    const receiver = await startOtlpReceiver();
    cleanups.push(() => receiver.close());
    const s = await serve({
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'onboarding-runner',
      // A long batch delay: only the graceful stop's flush can deliver these spans.
      OTEL_BSP_SCHEDULE_DELAY: '600000',
    });
    // An invalid traceparent (all-zero trace id) is ignored, never an error.
    const record = await runTraced(s, { traceparent: `00-${'0'.repeat(32)}-${PARENT_SPAN_ID}-01` });
    expect(record.status).toBe('succeeded');
    expect(record.traceId).toMatch(/^[0-9a-f]{32}$/);
    await s.stop();
    const spans = receiver.spans.filter((x) => x.traceId === record.traceId);
    expect(receiver.contentTypes[0]).toBe('application/json');
    const [execution] = byName(spans, 'execution traced');
    // No valid traceparent came in: the execution starts the trace.
    expect(execution).toMatchObject({ parentSpanId: '', resource: { 'service.name': 'onboarding-runner' } });
    expect(spans.filter((x) => x.name.startsWith('step ')).map((x) => x.parentSpanId)).toEqual([
      execution!.spanId,
      execution!.spanId,
      execution!.spanId,
    ]);
  });

  it('off unless OTEL_* turn it on: no traceId, no traceparent sent, and the SDK never imported', { timeout: 90_000 }, async () => {
    const s = await serve({});
    const sandboxBefore = sb.requests.length;
    const notifyBefore = notify.headers.length;
    const record = await runTraced(s, { traceparent: `00-${TRACE_ID}-${PARENT_SPAN_ID}-01` });
    expect(record.status).toBe('succeeded');
    expect(record.traceId).toBeUndefined();
    expect(sb.requests.slice(sandboxBefore).map((r) => r.headers.traceparent)).toEqual([undefined, undefined]);
    expect(notify.headers.slice(notifyBefore).map((h) => h.traceparent)).toEqual([undefined]);
    await s.stop();
    const imported = readFileSync(s.importLog, 'utf8')
      .split('\n')
      .filter((m) => /^@opentelemetry\/(sdk-|exporter-|otlp-|resources|core)/.test(m));
    expect(imported).toEqual([]);
  });
});

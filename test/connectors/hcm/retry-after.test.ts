/**
 * A 429's Retry-After, honoured the same way wherever a request is tried again: a step's `retry`
 * (HCM actions and core.http, through the one HTTP stack) waits at least what the service asked,
 * a transport retry with a fixed delay too, and a connection with limits holds its whole line
 * until then. Waits are measured as asked for (the engine's `sleep` hook), never as elapsed time,
 * except lower bounds.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CompiledIntegration } from '../../../src/definition/types.js';
import type { RuntimeServices } from '../../../src/connectors/types.js';
import { runExecution } from '../../../src/engine/run.js';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.js';
import { manualTriggerData } from '../../../src/triggers/manual.js';
import { compile, testServices } from '../../helpers/engine.js';
import { sandboxConnectionYaml } from '../../helpers/sandbox-env.js';

let sb: Sandbox;
let fake: Server;
let fakeUrl: string;
/** What the fake third-party API answers next (then 200). */
const fakeAnswers: Array<{ status: number; retryAfter?: string }> = [];

beforeAll(async () => {
  sb = await startSandbox({ port: 0, quiet: true });
  fake = createServer((req, res) => {
    req.resume();
    const next = fakeAnswers.shift();
    if (next) {
      res.writeHead(next.status, { 'content-type': 'application/json', ...(next.retryAfter ? { 'retry-after': next.retryAfter } : {}) });
      res.end('{"error":"slow down"}');
    } else {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    }
  });
  await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
  fakeUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}/hook`;
});
afterEach(() => {
  sb.clearFaults();
  fakeAnswers.length = 0;
});
afterAll(async () => {
  await sb?.close();
  await new Promise((r) => fake?.close(r));
});

let counter = 0;
const ORGS = { pathIncludes: '/organizations' };

function hcmIntegration(connectionExtra: string, step: string): CompiledIntegration {
  return compile(`name: retry-after-${++counter}
${sandboxConnectionYaml(sb, connectionExtra)}
trigger: { type: webhook }
steps:
${step}
`);
}

/** Runs `i`, recording each wait between step attempts (and waiting it for real). */
async function runRecording(i: CompiledIntegration, services: RuntimeServices = testServices()) {
  const waits: number[] = [];
  const record = await runExecution({
    integration: i,
    trigger: manualTriggerData(i, {}),
    services,
    sleep: async (ms, _step, signal) => {
      waits.push(ms);
      await sleep(ms, undefined, { signal });
    },
  });
  return { record, waits };
}

describe("429 + Retry-After and a step's retry", () => {
  it('an HCM action is tried again no sooner than Retry-After (seconds)', async () => {
    const i = hcmIntegration('', '  - id: orgs\n    action: hcm.listOrganizations\n    retry: { maxAttempts: 3, delayMs: 0 }');
    sb.addFault({ match: ORGS, status: 429, retryAfter: '1', times: 1 });
    const { record, waits } = await runRecording(i);
    expect(record.status, record.error?.message).toBe('succeeded');
    expect(record.steps[0]!.attempts).toBe(2);
    expect(waits).toEqual([1000]);
    expect(record.log.some((l) => /retrying in 1000 ms/.test(l.message))).toBe(true);
  });

  it('an HTTP-date Retry-After, and one far off is capped at 2 minutes', async () => {
    const i = hcmIntegration('', '  - id: orgs\n    action: hcm.listOrganizations\n    retry: { maxAttempts: 3, delayMs: 0 }');
    const services = testServices();
    sb.addFault({ match: ORGS, status: 503, retryAfter: new Date(Date.now() + 2000).toUTCString(), times: 1 });
    const dated = await runRecording(i, services);
    expect(dated.record.status).toBe('succeeded');
    // An HTTP date has whole seconds: between 1 and 2 s from when the answer came.
    expect(dated.waits[0]).toBeGreaterThan(0);
    expect(dated.waits[0]).toBeLessThanOrEqual(2000);

    sb.addFault({ match: ORGS, status: 429, retryAfter: '86400', times: 1 });
    const waits: number[] = [];
    const far = await runExecution({
      integration: i,
      trigger: manualTriggerData(i, {}),
      services,
      sleep: async (ms) => void waits.push(ms),
    });
    expect(far.status).toBe('succeeded');
    expect(waits).toEqual([120_000]);
  });

  it("the step's own delay wins when it is longer; no Retry-After, no change", async () => {
    const i = hcmIntegration('', '  - id: orgs\n    action: hcm.listOrganizations\n    retry: { maxAttempts: 3, delayMs: 1500 }');
    sb.addFault({ match: ORGS, status: 429, retryAfter: '1', times: 1 });
    sb.addFault({ match: ORGS, status: 500, times: 1 });
    const waits: number[] = [];
    const r = await runExecution({
      integration: i,
      trigger: manualTriggerData(i, {}),
      services: testServices(),
      sleep: async (ms) => void waits.push(ms),
    });
    expect(r.status).toBe('succeeded');
    expect(waits).toEqual([1500, 1500]);
  });

  it('core.http goes through the same stack: its step retry waits for Retry-After too', async () => {
    const i = compile(
      `name: retry-after-http-${++counter}\ntrigger: { type: webhook }\nsteps:\n  - id: call\n    action: core.http\n    retry: { maxAttempts: 2, delayMs: 0 }\n    inputs: { url: "${fakeUrl}", method: POST }\n`,
    );
    fakeAnswers.push({ status: 429, retryAfter: '1' });
    const { record, waits } = await runRecording(i);
    expect(record.status, record.error?.message).toBe('succeeded');
    expect(waits).toEqual([1000]);
  });

  it('a transport retry with a fixed delay waits for Retry-After too (hcm.rawRequest)', async () => {
    const i = hcmIntegration(
      '',
      '  - id: raw\n    action: hcm.rawRequest\n    inputs: { url: /api/common/v1/organizations, method: GET, maxRetryCount: 1, retryDelayMs: 0, retryOnAllErrors: true }',
    );
    sb.addFault({ match: ORGS, status: 429, retryAfter: '1', times: 1 });
    const t0 = performance.now();
    const { record } = await runRecording(i);
    expect(record.status, record.error?.message).toBe('succeeded');
    expect(record.log.some((l) => /retry 1 of 1 in 1000 ms/.test(l.message))).toBe(true);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(950);
  });
});

describe('429 + Retry-After on a connection with limits', () => {
  it("holds the connection's whole line until then", async () => {
    const i = hcmIntegration('    maxConcurrent: 5', '  - id: orgs\n    action: hcm.listOrganizations');
    const services = testServices();
    expect((await runRecording(i, services)).record.status).toBe('succeeded');
    sb.addFault({ match: ORGS, status: 429, retryAfter: '1', times: 1 });
    const refused = await runRecording(i, services);
    expect(refused.record.status).toBe('failed');
    expect(refused.record.error?.message).toMatch(/429/);
    // Another execution on the same connection waits out the second the service asked for.
    const t0 = performance.now();
    const next = await runRecording(i, services);
    expect(next.record.status).toBe('succeeded');
    expect(performance.now() - t0).toBeGreaterThanOrEqual(900);
  });
});

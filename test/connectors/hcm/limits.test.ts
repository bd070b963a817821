/**
 * A connection's outbound limits (`rateLimit`, `maxConcurrent`: src/connectors/http/limit.ts)
 * against the sandbox's tenant limit, through the real engine and HTTP stack: many executions at
 * once stay within the tenant's limit (no 429 reaches a step), waiting in the line counts against
 * the step's `timeoutMs`, and a 429's Retry-After is honoured by a step's `retry`.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RuntimeServices } from '../../../src/connectors/types.js';
import type { CompiledIntegration } from '../../../src/definition/types.js';
import { runExecution, type RunOptions } from '../../../src/engine/run.js';
import { startSandbox, type Sandbox } from '../../../src/sandbox/index.js';
import { manualTriggerData } from '../../../src/triggers/manual.js';
import { compile, testServices } from '../../helpers/engine.js';
import { sandboxConnectionYaml } from '../../helpers/sandbox-env.js';

let sb: Sandbox;

beforeAll(async () => {
  sb = await startSandbox({ port: 0, quiet: true });
});
afterEach(() => {
  sb.setTenantLimit({});
  sb.clearFaults();
});
afterAll(() => sb?.close());

let counter = 0;

/** An integration with one HCM step on connection `hcm` (its extra keys in `connection`, the step's in `step`). */
function integration(connection: string, step: string, name = `limits-${++counter}`): CompiledIntegration {
  return compile(`name: ${name}
${sandboxConnectionYaml(sb, connection)}
trigger: { type: webhook }
steps:
  - id: orgs
    action: hcm.listOrganizations
    inputs: {}
${step}
`);
}

function run(i: CompiledIntegration, services: RuntimeServices, opts: Partial<RunOptions> = {}) {
  return runExecution({ integration: i, trigger: manualTriggerData(i, {}), services, ...opts });
}

const apiRequests = () => sb.requests.filter((r) => !r.path.includes('/oauth2/')).length;

describe('connection rateLimit and maxConcurrent', () => {
  it('50 executions at once stay within the tenant limit: no 429 reaches a step', async () => {
    const i = integration('    rateLimit: { requests: 20, per: 2s }\n    maxConcurrent: 3', '');
    const services = testServices();
    // The token first, so the limit sees only API requests.
    expect((await run(i, services)).status).toBe('succeeded');
    // The tenant: 20 requests in any second, 3 in flight; each answer takes 50 ms. The connection
    // counts its 20 over 2 s: a busy machine may hold a request up to a second between leaving
    // here and being counted there (both run in this process), and the test still holds.
    sb.setTenantLimit({ requestsPerSecond: 20, maxConcurrent: 3, latencyMs: 50, retryAfter: 1 });
    const records = await Promise.all(Array.from({ length: 50 }, () => run(i, services)));
    const failed = records.filter((r) => r.status !== 'succeeded').map((r) => r.error?.message);
    expect(failed, JSON.stringify(sb.tenantLimitStats())).toEqual([]);
    const seen = sb.tenantLimitStats();
    expect(seen).toMatchObject({ accepted: 50, refused: 0 });
    expect(seen.peakConcurrent).toBeLessThanOrEqual(3);
    expect(seen.peakPerSecond).toBeLessThanOrEqual(20);
  });

  it('waiting in the line counts against timeoutMs: the queued step times out, named, and never calls', async () => {
    // One request in flight at a time; the first will take 3 s to answer. The line is per
    // integration and connection: the queued step is another version of the same integration.
    const i = integration('    maxConcurrent: 1', '    timeoutMs: 5000');
    const impatient = integration('    maxConcurrent: 1', '    timeoutMs: 200', i.name);
    const services = testServices();
    expect((await run(i, services)).status).toBe('succeeded');
    sb.addFault({ match: { pathIncludes: '/organizations' }, latencyMs: 3000, times: 1 });
    sb.clearRequests();
    let slowDone = false;
    const slow = run(i, services).finally(() => {
      slowDone = true;
    });
    while (apiRequests() < 1) await new Promise((r) => setTimeout(r, 10)); // the slow request has left
    const waiting = await run(impatient, services);
    expect(waiting.status).toBe('failed');
    expect(waiting.error?.message).toMatch(new RegExp(`^integration ${i.name}, step orgs \\(hcm.listOrganizations\\): timed out after 200 ms`));
    // It gave up while the slow request was still in flight, and its request never left.
    expect(slowDone).toBe(false);
    expect(apiRequests()).toBe(1);
    expect((await slow).status).toBe('succeeded');
    // Its place was freed: the next execution goes at once.
    expect((await run(i, services)).status).toBe('succeeded');
    expect(apiRequests()).toBe(2);
  });
});

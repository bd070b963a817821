/** core.call through the running server: run a call integration over the API, child executions stored and linked both ways, onFailure recorded. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, tempDir, type TestServer } from './helpers.js';

const dir = tempDir('hcm-control-flow-');
let server: TestServer;

beforeAll(async () => {
  writeFileSync(
    join(dir.path, 'double.yaml'),
    `name: double
trigger: { type: call }
steps:
  - id: check
    if: "{% $trigger.input.n < 0 %}"
    action: core.fail
    inputs: { message: negative }
  - id: twice
    action: core.transform
    inputs: { value: "{% $trigger.input.n * 2 %}" }
`,
  );
  writeFileSync(
    join(dir.path, 'caller.yaml'),
    `name: caller
trigger: { type: webhook }
steps:
  - id: viaSub
    action: core.call
    inputs: { integration: double, input: { n: "{% $trigger.body.data.n %}" } }
onFailure:
  - { id: alert, action: core.log, inputs: { message: "{% 'failed at ' & $failure.step %}" } }
`,
  );
  server = await startTestServer({ dir: dir.path });
});
afterAll(async () => {
  await server?.stop();
  dir.remove();
});

describe('core.call in serve', () => {
  it('POST /api/integrations/{name}/run runs a call integration with the payload as input', async () => {
    const r = await server.api('POST', '/integrations/double/run', { n: 4 });
    expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
    const done = await server.waitForExecution(r.body.executionId);
    expect(done).toMatchObject({ status: 'succeeded', result: 8, trigger: { input: { n: 4 } } });
  });

  it('a call is a stored child execution linked both ways; a failed child fails the step and onFailure runs once', async () => {
    const ok = await server.api('POST', '/integrations/caller/run', { n: 5 });
    const parent = await server.waitForExecution(ok.body.executionId);
    expect(parent.status).toBe('succeeded');
    expect(parent.result).toBe(10);
    const childId = parent.steps[0].childExecutionId;
    const child = await server.waitForExecution(childId);
    expect(child).toMatchObject({ integration: 'double', status: 'succeeded', parent: { executionId: parent.id, step: 'viaSub' } });

    const bad = await server.api('POST', '/integrations/caller/run', { n: -1 });
    const failed = await server.waitForExecution(bad.body.executionId);
    expect(failed.status).toBe('failed');
    expect(failed.error.message).toContain('negative');
    expect(failed.onFailure).toMatchObject({ status: 'succeeded', steps: [{ id: 'alert', results: { message: 'failed at viaSub' } }] });
    expect((await server.waitForExecution(failed.steps[0].childExecutionId)).status).toBe('failed');
  });
});

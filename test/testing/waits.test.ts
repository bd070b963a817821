/**
 * `hcm-runner test` with core.wait and core.callback (docs/testing.md "Waits and callbacks"), the
 * CLI as a child process on test/fixtures/testing-waits: waits finish at once and the report lists
 * them; a callback wait takes its request from the case's `callbacks:`, else the step fails
 * naming the key to add. And `hcm-runner run`, which cannot receive callbacks.
 */
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadFile } from '../../src/definition/load.js';
import { runExecution } from '../../src/engine/run.js';
import { caseFromExecution } from '../../src/testing/record.js';
import { manualTriggerData } from '../../src/triggers/manual.js';
import { cli, repoRoot } from '../helpers/cli.js';
import { memoryDurableHost } from '../helpers/durable-host.js';
import { testServices } from '../helpers/engine.js';

const work = mkdtempSync(join(tmpdir(), 'hcm-test-waits-'));
cpSync(join(repoRoot, 'test', 'fixtures', 'testing-waits'), work, { recursive: true });
afterAll(() => rmSync(work, { recursive: true, force: true }));

const test = (args: string[]) => cli(['test', ...args], { cwd: work });

describe('hcm-runner test: waits and callbacks', () => {
  it('finishes waits at once, lists them in the report, and hands a callback wait the case’s request', () => {
    const r = test(['approval.test.yaml', '--format', 'json']);
    const c = JSON.parse(r.stdout).files[0].cases;
    expect(c[0]).toMatchObject({ name: 'approved after the pause', passed: true, status: 'succeeded' });
    expect(c[0].durableWaits).toEqual([
      { step: 'pause', kind: 'time', for: '10m' },
      { step: 'approval', kind: 'callback', callbackUrl: 'http://hcm-runner.test/callbacks/test-link' },
    ]);
    expect(c[0].steps.find((s: { id: string }) => s.id === 'approval').results).toMatchObject({
      queryParameters: {},
      receivedAt: expect.any(String),
    });
  });

  it('a callback wait without its request in the case fails naming the key to add', () => {
    const r = test(['approval.test.yaml']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('PASS approval.test.yaml › approved after the pause');
    expect(r.stdout).toMatch(/waits finished at once: pause \(for 10m\), approval \(callback http:\/\/hcm-runner\.test\/callbacks\/test-link\)/);
    expect(r.stdout).toContain('FAIL approval.test.yaml › the approval never given in the case');
    expect(r.stdout).toContain('step approval waits for a callback: add callbacks.approval to the test case');
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe('1 passed, 1 failed');
  });

  it('callbacks: naming a step the integration does not have is a problem of the test file', () => {
    writeFileSync(join(work, 'typo.test.yaml'), 'integration: approval\ncases:\n  - name: typo\n    callbacks:\n      aproval: { body: {} }\n');
    const r = test(['typo.test.yaml']);
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toContain('callbacks: unknown step "aproval" — did you mean "approval"?');
  });
});

describe('hcm-runner run: waits', () => {
  it('finishes a time wait at once (said on stderr) and fails a callback wait saying run cannot receive callbacks', () => {
    const r = cli(['run', join(work, 'approval.yaml'), '--data', join(work, 'data')], { cwd: work });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('step pause: waiting for 10m — finished at once (hcm-runner run does not wait)');
    const record = JSON.parse(r.stdout);
    expect(record.steps.map((s: { id: string; status: string }) => `${s.id}:${s.status}`)).toEqual([
      'pause:succeeded',
      'link:succeeded',
      'approval:failed',
    ]);
    expect(record.error.message).toContain('hcm-runner run cannot receive callbacks');
  });
});

describe('hcm-runner test --record: waits and callbacks', () => {
  it('a recorded execution gives its callback request under callbacks:, and the case passes when run back', async () => {
    const integration = loadFile(join(work, 'approval.yaml'), 'approval.yaml').integration!;
    const host = memoryDurableHost('now', 'http://runner.test');
    host.receive('http://runner.test/callbacks/tok1', { body: { approved: false }, headers: { 'x-by': 'manager' } });
    const record = await runExecution({ integration, trigger: manualTriggerData(integration, {}), services: testServices(), durable: host });
    expect(record.status, JSON.stringify(record.error)).toBe('succeeded');
    const recorded = await caseFromExecution(record, integration);
    expect(recorded.callbacks).toEqual({
      approval: { method: 'POST', headers: { 'x-by': 'manager' }, queryParameters: {}, body: { approved: false } },
    });
    // A token and a time differ on every run: only their steps' status is expected.
    expect((recorded.expect as { steps: Record<string, unknown> }).steps).toMatchObject({
      pause: { status: 'succeeded' },
      link: { status: 'succeeded' },
      approval: { status: 'succeeded' },
      decide: { status: 'succeeded', results: 'rejected' },
    });
    writeFileSync(join(work, 'recorded.test.yaml'), stringify({ integration: 'approval', cases: [recorded] }));
    const r = test(['recorded.test.yaml']);
    expect(r.stdout).toContain('1 passed, 0 failed');
    expect(r.code).toBe(0);
  });
});

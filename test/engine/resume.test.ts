/**
 * Resume, not restart (docs/promises.md): a run resumed from the record a checkpoint saved does
 * not run again what had finished — core.http against a real loopback server counts the requests
 * — at the top level, in groups, switches, forEach groups and forEach action items, and keeps
 * skipped and continued steps as they were.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ExecutionRecord, StepRecord } from '../../src/engine/record.js';
import { stepsBeforeFailure } from '../../src/engine/resume.js';
import { runExecution, type RunOptions } from '../../src/engine/run.js';
import { manualTriggerData } from '../../src/triggers/manual.js';
import { compile, testServices } from '../helpers/engine.js';

let server: Server;
let base: string;
/** Requests by path and query, as the server saw them. */
let hits: string[] = [];
beforeAll(async () => {
  server = createServer((req, res) => {
    hits.push(req.url!);
    const status = req.url!.startsWith('/fail') ? 500 : 200;
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ path: req.url }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((r) => server.close(r)));
beforeEach(() => {
  hits = [];
});

/** A core.http POST step on one line (it nests at any depth). */
const post = (id: string, path: string) => `- { id: ${id}, action: core.http, inputs: { url: "${base}${path}", method: POST } }`;

const yaml = () => `name: t
trigger: { type: webhook }
steps:
  ${post('a', '/a')}
  - id: shape
    action: core.transform
    inputs: { value: "{% $steps.a.body.path & '!' %}" }
  - { id: never, if: false, action: core.http, inputs: { url: "${base}/never", method: POST } }
  - id: bad
    onError: continue
    action: core.http
    inputs: { url: "${base}/fail", method: POST }
  - id: g
    steps:
      ${post('g1', '/g1')}
      ${post('g2', '/g2')}
  - id: sw
    switch:
      cases:
        - name: one
          when: "{% $trigger.body.data.pick = 'one' %}"
          steps:
            ${post('s1', '/s1')}
            ${post('s2', '/s2')}
      default:
        ${post('d1', '/d1')}
  - id: fe
    forEach: [1, 2, 3]
    steps:
      - id: h
        action: core.http
        inputs: { url: "{% '${base}/fe?i=' & $item %}", method: POST }
  - id: fa
    forEach: [1, 2, 3]
    action: core.http
    inputs: { url: "{% '${base}/fa?i=' & $item %}", method: POST }
  - id: last
    action: core.transform
    inputs:
      value: "{% [$steps.shape, $steps.g.g2.body.path, $steps.sw.s2.body.path, $steps.fe[2].h.body.path, $steps.fa[1].body.path, $errors.bad.status, $exists($steps.never)] %}"
`;

interface Checkpoint {
  record: ExecutionRecord;
  /** Requests the server had seen when the checkpoint was taken. */
  hits: number;
}

function options(pick: string, extra: Partial<RunOptions> = {}): RunOptions {
  const integration = compile(yaml());
  return { integration, trigger: manualTriggerData(integration, { pick }), services: testServices(), ...extra };
}

/** The statuses of a record's steps at every depth, as one list. */
function shape(steps: readonly StepRecord[]): string[] {
  const out: string[] = [];
  for (const s of steps) {
    out.push(`${s.id}:${s.status}`);
    if (s.steps) out.push(...shape(s.steps).map((x) => `${s.id}/${x}`));
    for (const it of s.iterations ?? []) out.push(...shape(it.steps).map((x) => `${s.id}[${it.index}]/${x}`));
  }
  return out;
}

describe('resume from a checkpoint', () => {
  it('checkpoints after every finished non-read-only step and forEach item, never after core.transform', async () => {
    const checkpoints: Checkpoint[] = [];
    const full = await runExecution(
      options('one', { checkpoint: async (r) => void checkpoints.push({ record: structuredClone(r), hits: hits.length }) }),
    );
    expect(full.status, JSON.stringify(full.error)).toBe('succeeded');
    // a, bad (continued), g1, g2, s1, s2, fe's 3 h, fa's 3 items and fa itself.
    expect(checkpoints.map((c) => c.hits)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 12]);
    expect(full.result).toEqual(['/a!', '/g2', '/s2', '/fe?i=3', '/fa?i=2', 500, false]);
    // Partial results of a forEach action step are kept while it runs, dropped when it finishes.
    expect(checkpoints[10]!.record.steps.at(-1)).toMatchObject({ id: 'fa', status: 'running', done: { 0: { body: { path: '/fa?i=1' } } } });
    expect(full.steps.find((s) => s.id === 'fa')!.done).toBeUndefined();
  });

  it('after a crash at any checkpoint: the steps and items finished before it are not run again, and the results are the same', async () => {
    const checkpoints: Checkpoint[] = [];
    const full = await runExecution(
      options('one', { checkpoint: async (r) => void checkpoints.push({ record: structuredClone(r), hits: hits.length }) }),
    );
    const everything = [...hits];
    for (const cp of checkpoints) {
      hits = [];
      const resumed = await runExecution(options('one', { resume: structuredClone(cp.record.steps), attempt: 2 }));
      expect(resumed.status, JSON.stringify(resumed.error)).toBe('succeeded');
      // Exactly the requests not made before the crash, in order.
      expect(hits).toEqual(everything.slice(cp.hits));
      expect(resumed.result).toEqual(full.result);
      expect(shape(resumed.steps)).toEqual(shape(full.steps));
    }
  });

  it('a reused step keeps its record as it was; a skipped step stays skipped, a continued one keeps its error', async () => {
    const checkpoints: ExecutionRecord[] = [];
    await runExecution(options('one', { checkpoint: async (r) => void checkpoints.push(structuredClone(r)) }));
    const afterBad = checkpoints[1]!;
    expect(afterBad.steps.map((s) => s.id)).toEqual(['a', 'shape', 'never', 'bad']);
    hits = [];
    const resumed = await runExecution(options('one', { resume: afterBad.steps }));
    expect(resumed.steps[0]).toBe(afterBad.steps[0]);
    expect(resumed.steps[2]).toMatchObject({ id: 'never', status: 'skipped' });
    expect(resumed.steps[3]).toBe(afterBad.steps[3]);
    expect(hits.filter((h) => h === '/a' || h === '/never' || h === '/fail')).toEqual([]);
    expect((resumed.result as unknown[])[5]).toBe(500);
  });

  it('a switch resumes in the case it took, even when the data would now choose another', async () => {
    const checkpoints: ExecutionRecord[] = [];
    await runExecution(options('one', { checkpoint: async (r) => void checkpoints.push(structuredClone(r)) }));
    // After s1, inside case `one`.
    const inSwitch = checkpoints[4]!;
    expect(inSwitch.steps.at(-1)).toMatchObject({ id: 'sw', case: 'one', status: 'running' });
    hits = [];
    const resumed = await runExecution(options('two', { resume: inSwitch.steps }));
    expect(resumed.status).toBe('succeeded');
    expect(hits).not.toContain('/s1');
    expect(hits).toContain('/s2');
    expect(hits).not.toContain('/d1');
    expect(resumed.steps.find((s) => s.id === 'sw')!.case).toBe('one');
  });

  it('a step that ran another action in the earlier run (the integration changed) runs again', async () => {
    const checkpoints: ExecutionRecord[] = [];
    await runExecution(options('one', { checkpoint: async (r) => void checkpoints.push(structuredClone(r)) }));
    const first = checkpoints[0]!;
    first.steps[0]!.action = 'core.transform';
    hits = [];
    await runExecution(options('one', { resume: first.steps }));
    expect(hits[0]).toBe('/a');
  });
});

describe('retry from the failed step', () => {
  const retryable = () => `name: t
trigger: { type: webhook }
steps:
  ${post('a', '/a')}
  - id: bad
    onError: continue
    action: core.http
    inputs: { url: "${base}/fail", method: POST }
  - id: g
    steps:
      ${post('g1', '/g1')}
      - id: g2
        action: core.http
        inputs: { url: { env: G2_URL }, method: POST }
  ${post('after', '/after')}
`;

  it('resumes from the records before the failed step: a continued failure before it is kept, the failed step and the rest run', async () => {
    const integration = compile(retryable());
    const trigger = manualTriggerData(integration, {});
    const failed = await runExecution({ integration, trigger, services: testServices(), env: { G2_URL: `${base}/fail-g2` } });
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatchObject({ step: 'g2' });
    // No `continued` given: the record tells (bad has records after it, so it was continued).
    const from = stepsBeforeFailure(failed.steps);
    expect(shape(from)).toEqual(['a:succeeded', 'bad:failed', 'g:running', 'g/g1:succeeded']);
    hits = [];
    const retry = await runExecution({ integration, trigger, services: testServices(), env: { G2_URL: `${base}/g2` }, resume: from });
    expect(retry.status, JSON.stringify(retry.error)).toBe('succeeded');
    expect(hits).toEqual(['/g2', '/after']);
    expect(shape(retry.steps)).toEqual(['a:succeeded', 'bad:failed', 'g:succeeded', 'g/g1:succeeded', 'g/g2:succeeded', 'after:succeeded']);
  });
});

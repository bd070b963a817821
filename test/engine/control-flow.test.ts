/** Groups, forEach groups with concurrency, switches, onFailure and core.call through the real engine. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CompiledIntegration } from '../../src/definition/types.js';
import type { ExecutionRecord } from '../../src/engine/record.js';
import { runExecution } from '../../src/engine/run.js';
import { callHost } from '../../src/triggers/call/children.js';
import { compile, run, testServices } from '../helpers/engine.js';

const webhook = (steps: string, extra = '') => `name: t\ntrigger: { type: webhook }\nsteps:\n${steps}${extra}`;

/** A fake that answers /item/<n> after `delay` ms and counts requests in flight. */
let server: Server;
let base: string;
let inFlight = 0;
let maxInFlight = 0;
beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    setTimeout(
      () => {
        inFlight--;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: url.pathname }));
      },
      Number(url.searchParams.get('delay') ?? 0),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((r) => server.close(r)));

const ids = (steps: ExecutionRecord['steps'] | undefined) => (steps ?? []).map((s) => `${s.id}:${s.status}`);

describe('groups', () => {
  it('runs its steps in order; results are an object keyed by the steps that ran; the record nests', async () => {
    const r = await run(
      webhook(`  - id: a
    action: core.transform
    inputs: { value: 10 }
  - id: g
    steps:
      - id: x
        action: core.transform
        inputs: { value: "{% $steps.a + 1 %}" }
      - id: skipped
        if: false
        action: core.log
        inputs: { message: never }
      - id: y
        action: core.transform
        inputs: { value: "{% $steps.x * 2 %}" }
  - id: after
    action: core.transform
    inputs: { value: "{% $steps.g.y %}" }
`),
    );
    expect(r.status).toBe('succeeded');
    expect(ids(r.steps)).toEqual(['a:succeeded', 'g:succeeded', 'after:succeeded']);
    expect(r.steps[1]!.action).toBe('group');
    expect(ids(r.steps[1]!.steps)).toEqual(['x:succeeded', 'skipped:skipped', 'y:succeeded']);
    expect(r.steps[1]!.steps![2]!.results).toBe(22);
    expect(r.result).toBe(22);
  });

  it('forEach group: one object per item in item order, iterations [{index, steps}] in order, whatever the concurrency', async () => {
    for (const concurrency of [1, 3]) {
      maxInFlight = 0;
      const r = await run(
        webhook(`  - id: each
    forEach: [0, 1, 2, 3, 4, 5]
    concurrency: ${concurrency}
    steps:
      - id: get
        action: core.http
        inputs: { url: "{% '${base}/item/' & $item & '?delay=' & (6 - $item) * 40 %}" }
      - id: shape
        action: core.transform
        inputs: { value: "{% {'i': $index, 'path': $steps.get.body.path} %}" }
`),
      );
      expect(r.status, JSON.stringify(r.error)).toBe('succeeded');
      const results = r.result as Array<{ shape: unknown; get: unknown }>;
      expect(results.map((o) => o.shape)).toEqual([0, 1, 2, 3, 4, 5].map((i) => ({ i, path: `/item/${i}` })));
      expect(Object.keys(results[0]!)).toEqual(['get', 'shape']);
      const its = r.steps[0]!.iterations!;
      expect(its.map((i) => i.index)).toEqual([0, 1, 2, 3, 4, 5]);
      expect(its.every((i) => ids(i.steps).join() === 'get:succeeded,shape:succeeded')).toBe(true);
      if (concurrency === 1) expect(maxInFlight).toBe(1);
      else {
        expect(maxInFlight).toBeGreaterThan(1);
        expect(maxInFlight).toBeLessThanOrEqual(3);
      }
    }
  });

  it('action step forEach with concurrency: results in item order', async () => {
    maxInFlight = 0;
    const r = await run(
      webhook(`  - id: get
    forEach: [0, 1, 2, 3]
    concurrency: 4
    action: core.http
    inputs: { url: "{% '${base}/n/' & $item & '?delay=' & (4 - $item) * 50 %}" }
`),
    );
    expect((r.result as Array<{ body: { path: string } }>).map((x) => x.body.path)).toEqual(['/n/0', '/n/1', '/n/2', '/n/3']);
    expect(maxInFlight).toBeGreaterThan(1);
    expect(maxInFlight).toBeLessThanOrEqual(4);
  });

  it('a failing step fails its group and the execution with its own error; onError continue on the group goes on', async () => {
    const failing = (onError: string) =>
      webhook(`  - id: g
    onError: ${onError}
    steps:
      - id: boom
        action: core.fail
        inputs: { message: broken }
      - id: never
        action: core.log
        inputs: { message: x }
  - id: after
    action: core.transform
    inputs: { value: "{% $errors.g.step %}" }
`);
    const failed = await run(failing('fail'));
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatchObject({ step: 'boom', action: 'core.fail' });
    expect(ids(failed.steps)).toEqual(['g:failed']);
    expect(ids(failed.steps[0]!.steps)).toEqual(['boom:failed']);
    expect(failed.log.filter((l) => l.level === 'error')).toHaveLength(1);
    const continued = await run(failing('continue'));
    expect(continued.status).toBe('succeeded');
    expect(continued.result).toBe('boom');
  });
});

describe('switch', () => {
  const yaml = webhook(`  - id: route
    switch:
      cases:
        - name: hire
          when: "{% body.data.type = 'hire' %}"
          steps:
            - { id: hello, action: core.transform, inputs: { value: "{% 'hi ' & body.data.who %}" } }
        - name: termination
          when: "{% body.data.type = 'termination' %}"
          steps:
            - { id: bye, action: core.transform, inputs: { value: bye } }
      default:
        - { id: other, action: core.transform, inputs: { value: other } }
`);
  it("runs the first matching case; records its name and steps; results are the case's", async () => {
    const r = await run(yaml, { type: 'hire', who: 'Ada' });
    expect(r.steps[0]).toMatchObject({ id: 'route', action: 'switch', status: 'succeeded', case: 'hire' });
    expect(ids(r.steps[0]!.steps)).toEqual(['hello:succeeded']);
    expect(r.result).toEqual({ hello: 'hi Ada' });
    const d = await run(yaml, { type: 'transfer' });
    expect(d.steps[0]!.case).toBe('default');
    expect(d.result).toEqual({ other: 'other' });
  });

  it('without a match and without default it is skipped', async () => {
    const r = await run(
      webhook(`  - id: route
    switch:
      cases:
        - { name: a, when: false, steps: [ { id: x, action: core.log, inputs: { message: m } } ] }
`),
    );
    expect(r.status).toBe('succeeded');
    expect(r.steps[0]).toMatchObject({ id: 'route', status: 'skipped' });
    expect(r.steps[0]!.steps).toBeUndefined();
  });
});

describe('core.respond, core.stop and core.fail inside blocks act on the execution', () => {
  it('core.stop in an iteration ends the execution, succeeded; result stays the last top-level step that ran', async () => {
    const r = await run(
      webhook(`  - id: first
    action: core.transform
    inputs: { value: before }
  - id: each
    forEach: [1, 2, 3]
    steps:
      - id: answer
        if: "{% $item = 2 %}"
        action: core.respond
        inputs: { statusCode: 201, body: "{% $item %}" }
      - id: halt
        if: "{% $item = 2 %}"
        action: core.stop
  - id: later
    action: core.transform
    inputs: { value: later }
`),
    );
    expect(r.status).toBe('succeeded');
    expect(r.response).toMatchObject({ statusCode: 201, body: 2 });
    expect(ids(r.steps)).toEqual(['first:succeeded', 'each:succeeded']);
    expect(r.steps[1]!.iterations!.map((i) => i.index)).toEqual([0, 1]);
    expect(r.result).toBe('before');
  });

  it('core.stop in a parallel loop starts no further items', async () => {
    const r = await run(
      webhook(`  - id: each
    forEach: "{% [0..99] %}"
    concurrency: 5
    steps:
      - { id: halt, if: "{% $item = 3 %}", action: core.stop }
`),
    );
    expect(r.status).toBe('succeeded');
    expect(r.steps[0]!.iterations!.length).toBeLessThan(20);
  });

  it('core.fail inside a case fails the execution with that step named', async () => {
    const r = await run(
      webhook(`  - id: route
    switch:
      cases: [ { name: bad, when: true, steps: [ { id: nope, action: core.fail, inputs: { message: "unknown type" } } ] } ]
`),
    );
    expect(r.status).toBe('failed');
    expect(r.error).toMatchObject({ step: 'nope', message: expect.stringContaining('unknown type') });
    expect(r.steps[0]).toMatchObject({ status: 'failed', case: 'bad' });
  });
});

describe('onFailure', () => {
  const yaml = (alert: string) =>
    webhook(
      `  - id: ok
    action: core.transform
    inputs: { value: 1 }
  - id: boom
    if: "{% body.data.fail %}"
    action: core.fail
    inputs: { message: nightly sync broke }
`,
      `onFailure:
  - id: alert
    action: core.transform
    inputs: { value: "{% $failure %}" }
${alert}`,
    );

  it('runs once after the execution failed, with $failure; recorded as onFailure; the status stays failed', async () => {
    const r = await run(yaml(''), { fail: true }, { executionId: 'e-1' });
    expect(r.status).toBe('failed');
    expect(r.onFailure!.status).toBe('succeeded');
    expect(ids(r.onFailure!.steps)).toEqual(['alert:succeeded']);
    expect(r.onFailure!.steps[0]!.results).toEqual({
      executionId: 'e-1',
      integration: 't',
      attempt: 1,
      test: false,
      step: 'boom',
      error: r.error,
    });
    expect(r.result).toBe(1);
  });

  it('does not run when the execution succeeds', async () => {
    const r = await run(yaml(''), { fail: false });
    expect(r.status).toBe('succeeded');
    expect(r.onFailure).toBeUndefined();
  });

  it('its own failure is logged and recorded, does not trigger it again and does not change the status', async () => {
    const r = await run(yaml('  - { id: alertFails, action: core.fail, inputs: { message: alert channel down } }\n'), { fail: true });
    expect(r.status).toBe('failed');
    expect(r.error).toMatchObject({ step: 'boom' });
    expect(r.onFailure).toMatchObject({ status: 'failed', error: { step: 'alertFails' } });
    expect(r.onFailure!.steps.map((s) => s.id)).toEqual(['alert', 'alertFails']);
    expect(r.log.filter((l) => l.message.startsWith('onFailure failed'))).toHaveLength(1);
  });
});

describe('core.call', () => {
  const sub = compile(`name: sub
trigger: { type: call }
steps:
  - id: check
    if: "{% $trigger.input.fail %}"
    action: core.fail
    inputs: { message: "{% 'bad input ' & $trigger.input.n %}" }
  - id: double
    action: core.transform
    inputs: { value: "{% $trigger.input.n * 2 %}" }
`);
  // Calls itself through an expression: only the depth bound stops it.
  const loop = compile(`name: loop
trigger: { type: call }
steps:
  - id: again
    action: core.call
    inputs: { integration: "{% 'lo' & 'op' %}", input: "{% $trigger.input + 1 %}" }
`);
  const notCallable = compile(`name: hook\ntrigger: { type: webhook }\nsteps: [ { id: a, action: core.log, inputs: { message: m } } ]\n`);
  const byName = new Map<string, CompiledIntegration>([
    ['sub', sub],
    ['loop', loop],
    ['hook', notCallable],
  ]);

  function host(children: ExecutionRecord[]) {
    return callHost(
      (n) => byName.get(n),
      async (integration, child) => {
        const rec = await runExecution({ integration, services: testServices(), ...child });
        children.push(rec);
        return rec;
      },
    );
  }

  const caller = (integration: string, input: string) =>
    webhook(`  - id: callIt
    action: core.call
    inputs: { integration: ${integration}, input: ${input} }
`);

  it('runs the child as its own execution linked both ways; its result is the step results', async () => {
    const children: ExecutionRecord[] = [];
    const r = await run(caller('sub', '{ n: 21 }'), {}, { call: host(children), executionId: 'parent-1' });
    expect(r.status, JSON.stringify(r.error)).toBe('succeeded');
    expect(r.result).toBe(42);
    expect(children).toHaveLength(1);
    expect(children[0]).toMatchObject({
      integration: 'sub',
      status: 'succeeded',
      parent: { executionId: 'parent-1', step: 'callIt' },
      trigger: { input: { n: 21 } },
    });
    expect(r.steps[0]!.childExecutionId).toBe(children[0]!.id);
  });

  it("a failed child fails the step with the child's error", async () => {
    const children: ExecutionRecord[] = [];
    const r = await run(caller('sub', '{ n: 7, fail: true }'), {}, { call: host(children) });
    expect(r.status).toBe('failed');
    expect(children[0]!.status).toBe('failed');
    expect(r.error!.message).toContain('bad input 7');
    expect(r.steps[0]!.childExecutionId).toBe(children[0]!.id);
  });

  it('refuses an integration whose trigger is not call, and nesting deeper than 8', async () => {
    const r = await run(caller('hook', '{}'), {}, { call: host([]) });
    expect(r.error!.message).toContain('core.call runs only integrations whose trigger is `type: call`');
    const children: ExecutionRecord[] = [];
    const deep = await run(caller('loop', '1'), {}, { call: host(children) });
    expect(deep.status).toBe('failed');
    expect(children).toHaveLength(8);
    const deepest = children.find((c) => c.trigger && (c.trigger as { input: number }).input === 8)!;
    expect(deepest.error!.message).toContain('would nest calls 9 deep; at most 8');
  });
});

describe('a large loop', () => {
  it('100,000 items with concurrency 50 finish and leave the event loop turns meanwhile', async () => {
    let finished = false;
    let timerSawFinished: boolean | undefined;
    setTimeout(() => (timerSawFinished = finished), 0);
    const r = await run(
      webhook(`  - id: each
    forEach: "{% [1..100000] %}"
    concurrency: 50
    steps:
      - { id: x, action: core.transform, inputs: { value: "{% $item %}" } }
`),
    );
    finished = true;
    expect(r.status).toBe('succeeded');
    expect((r.result as unknown[]).length).toBe(100_000);
    expect((r.result as Array<{ x: number }>)[99_999]!.x).toBe(100_000);
    expect(timerSawFinished).toBe(false);
  }, 120_000);
});

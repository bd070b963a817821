/**
 * core.wait and core.callback through the real engine, with a host kept in memory
 * (test/helpers/durable-host.ts): a wait ends the run `waiting`, a resumed run re-checks it from
 * its record; callbacks, timeouts, the cap, validation; read-only steps and checkpoints; cancel.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hcmActions } from '../../src/connectors/hcm/declarations/index.js';
import { loadText } from '../../src/definition/load.js';
import type { ExecutionRecord, StepRecord } from '../../src/engine/record.js';
import { runExecution, type RunOptions } from '../../src/engine/run.js';
import { callHost } from '../../src/triggers/call/children.js';
import { manualTriggerData } from '../../src/triggers/manual.js';
import { memoryDurableHost } from '../helpers/durable-host.js';
import { compile, testServices } from '../helpers/engine.js';

const webhook = (steps: string, extra = '') => `name: t\ntrigger: { type: webhook }\nsteps:\n${steps}${extra}`;

function start(yaml: string, extra: Partial<RunOptions> = {}): Promise<ExecutionRecord> {
  const integration = compile(yaml);
  return runExecution({ integration, trigger: manualTriggerData(integration, {}), services: testServices(), ...extra });
}

/** The record of step `path` (`g/w`, `fe[1]/w`). */
function find(steps: readonly StepRecord[], path: string): StepRecord | undefined {
  const [head, ...rest] = path.split('/');
  const m = /^(\w+)(?:\[(\d+)\])?$/.exec(head!)!;
  const s = steps.find((x) => x.id === m[1]);
  if (!s || rest.length === 0) return s;
  const inner = m[2] !== undefined ? s.iterations?.find((it) => it.index === Number(m[2]))?.steps : s.steps;
  return find(inner ?? [], rest.join('/'));
}

const minutes = (iso: string | undefined) => (Date.parse(iso!) - Date.now()) / 60_000;

describe('core.wait for and until', () => {
  const yaml = webhook(
    `  - id: before
    action: core.transform
    inputs: { value: 1 }
  - id: w
    action: core.wait
    inputs: { for: 10m }
  - id: after
    action: core.transform
    inputs: { value: "{% $steps.w.wokeAt %}" }
`,
    `onFailure:
  - id: alarm
    action: core.log
    inputs: { message: failed }
`,
  );

  it('suspends the run: status waiting with wakeAt and waitingFor, the step waiting; no onFailure, nothing after it', async () => {
    const host = memoryDurableHost();
    const r = await start(yaml, { durable: host });
    expect(r.status).toBe('waiting');
    expect(minutes(r.wakeAt)).toBeGreaterThan(9.9);
    expect(minutes(r.wakeAt)).toBeLessThan(10.1);
    expect(r.waitingFor).toEqual({ step: 'w', kind: 'time' });
    expect(r.steps.map((s) => `${s.id}:${s.status}`)).toEqual(['before:succeeded', 'w:waiting']);
    expect(r.steps[1]!.wakeAt).toBe(r.wakeAt);
    expect(r.onFailure).toBeUndefined();
    expect(r.error).toBeUndefined();
    expect(host.admitted).toEqual([r.id]);
  });

  it('resumed before its time it waits again for the same wakeAt (not 10 minutes more); once due it wakes with {wokeAt}', async () => {
    const host = memoryDurableHost();
    const first = await start(yaml, { durable: host });
    const again = await start(yaml, { durable: host, executionId: first.id, resume: structuredClone(first.steps) });
    expect(again.status).toBe('waiting');
    expect(again.wakeAt).toBe(first.wakeAt);
    expect(host.admitted).toEqual([first.id]); // counted once: it was already waiting
    // Its time comes.
    const due = structuredClone(first.steps);
    due[1]!.wakeAt = new Date(Date.now() - 1000).toISOString();
    const woke = await start(yaml, { durable: host, executionId: first.id, resume: due });
    expect(woke.status).toBe('succeeded');
    expect(woke.steps.map((s) => `${s.id}:${s.status}`)).toEqual(['before:succeeded', 'w:succeeded', 'after:succeeded']);
    expect(Math.abs(Date.parse(woke.result as string) - Date.now())).toBeLessThan(5000);
    expect(woke.steps[0]).toBe(due[0]);
  });

  it('until: a past time wakes at once, a future one is the wakeAt', async () => {
    const host = memoryDurableHost();
    const past = await start(webhook(`  - id: w\n    action: core.wait\n    inputs: { until: "2020-01-01T00:00:00Z" }\n`), { durable: host });
    expect(past.status).toBe('succeeded');
    expect((past.result as { wokeAt: string }).wokeAt).toBeDefined();
    const at = new Date(Date.now() + 3 * 3600_000).toISOString();
    const future = await start(webhook(`  - id: w\n    action: core.wait\n    inputs: { until: "${at}" }\n`), { durable: host });
    expect(future.status).toBe('waiting');
    expect(future.wakeAt).toBe(at);
  });

  it('a wait nested in a forEach group names its path; a parallel iteration that fails wins over one that waits', async () => {
    const host = memoryDurableHost();
    const nested = await start(
      webhook(`  - id: fe
    forEach: [1, 2]
    steps:
      - id: g
        steps:
          - id: w
            action: core.wait
            inputs: { for: 1h }
`),
      { durable: host },
    );
    expect(nested.status).toBe('waiting');
    expect(nested.waitingFor).toEqual({ step: 'fe[0].g.w', kind: 'time' });
    expect(find(nested.steps, 'fe[0]/g/w')!.status).toBe('waiting');
    expect(find(nested.steps, 'fe')!.status).toBe('waiting');

    const parallel = (failing: boolean) =>
      webhook(`  - id: fe
    forEach: [1, 2, 3]
    concurrency: 3
    steps:
      - id: w
        if: "{% $item = 1 %}"
        action: core.wait
        inputs: { for: 1h }
      - id: f
        if: "{% $item = 3 and ${failing} %}"
        action: core.fail
        inputs: { message: real failure }
`);
    const waits = await start(parallel(false), { durable: host });
    expect(waits.status).toBe('waiting');
    // The running iterations finished.
    expect(find(waits.steps, 'fe[1]/w')!.status).toBe('skipped');
    expect(find(waits.steps, 'fe[2]/f')!.status).toBe('skipped');
    const fails = await start(parallel(true), { durable: host });
    expect(fails.status).toBe('failed');
    expect(fails.error).toMatchObject({ step: 'f', message: expect.stringContaining('real failure') });
  });

  it('mode now: waits finish at once and the host is told', async () => {
    const host = memoryDurableHost('now');
    const r = await start(yaml, { durable: host });
    expect(r.status).toBe('succeeded');
    expect(host.waits).toEqual([{ step: 'w', kind: 'time', wakeAt: expect.any(String), for: '10m' }]);
    expect(host.admitted).toEqual([]);
  });

  it('computed inputs are checked at run time: one of for/until/callback, timeout only with callback, a bounded duration', async () => {
    const host = memoryDurableHost();
    const fails = async (inputs: string) => {
      const r = await start(webhook(`  - id: w\n    action: core.wait\n    inputs: ${inputs}\n`), { durable: host });
      expect(r.status).toBe('failed');
      return (r.error as { message: string }).message;
    };
    expect(await fails(`{ for: "{% '1h' %}", until: "{% '2030-01-01T00:00:00Z' %}" }`)).toContain(
      'give only one of the inputs for, until or callback, not for and until',
    );
    expect(await fails(`{ for: "{% $trigger.body.data.nothing %}" }`)).toContain('give one of the inputs for, until or callback');
    expect(await fails(`{ for: "{% '1h' %}", callback: "{% $trigger.body.data.none %}", timeout: "{% '2h' %}" }`)).toContain(
      '"timeout" goes with "callback" only',
    );
    expect(await fails(`{ for: "{% '400d' %}" }`)).toContain('at most 365d');
    expect(await fails(`{ until: "{% 'soon' %}" }`)).toContain('step w (core.wait): input "until" must be a date');
  });

  it('literal inputs are checked when the file loads, and core.wait may not have forEach', () => {
    const problems = (step: string) => loadText('w.yaml', webhook(`  - id: w\n    action: core.wait\n${step}\n`)).problems.map((p) => p.message);
    expect(problems('    inputs: { for: 1h, until: "2030-01-01T00:00:00Z" }')).toContainEqual(
      'step "w" (core.wait) has for and until: give only one of the inputs for, until or callback',
    );
    expect(problems('    inputs: {}')).toContainEqual('step "w" (core.wait) needs one of the inputs for, until or callback');
    expect(problems('    inputs: { for: 1h, timeout: 2h }')).toContainEqual(
      'step "w" (core.wait): timeout goes with callback only (a time wait ends by itself)',
    );
    expect(problems('    forEach: [1, 2]\n    inputs: { for: 1h }')).toContainEqual(
      'step "w" (core.wait) cannot have forEach: put the wait in the steps of a forEach group, one wait per iteration',
    );
    expect(problems('    inputs: { for: "{% $trigger.body.data.a %}", until: "{% $trigger.body.data.b %}" }')).toEqual([]);
  });

  it('without a durable host both actions fail saying this host cannot wait', async () => {
    for (const step of ['action: core.wait\n    inputs: { for: 1m }', 'action: core.callback']) {
      const r = await start(webhook(`  - id: w\n    ${step}\n`));
      expect(r.status).toBe('failed');
      expect((r.error as { message: string }).message).toContain('this host cannot wait');
    }
  });

  it('at the cap of waiting executions the wait step fails with code waiting_limit', async () => {
    const host = memoryDurableHost();
    host.full = true;
    const r = await start(yaml, { durable: host });
    expect(r.status).toBe('failed');
    expect(r.error).toMatchObject({ step: 'w', code: 'waiting_limit', message: expect.stringContaining('as many as it may have') });
    expect(r.onFailure?.status).toBe('succeeded');
  });
});

describe('callbacks', () => {
  const yaml = (timeout = '', onError = 'fail') =>
    webhook(`  - id: cb
    action: core.callback
    inputs: { expiresIn: 2d }
  - id: approve
    action: core.log
    inputs: { message: "{% 'approve at ' & $steps.cb.url %}" }
  - id: w
    onError: ${onError}
    action: core.wait
    inputs: { callback: "{% $steps.cb.url %}"${timeout} }
  - id: after
    action: core.transform
    inputs: { value: "{% $exists($steps.w) ? $steps.w.body : $errors.w.code %}" }
`);

  it('core.callback returns {url, expiresAt}; the wait suspends until the request comes, whose results are the request', async () => {
    const host = memoryDurableHost();
    const first = await start(yaml(), { durable: host });
    expect(first.status).toBe('waiting');
    const cb = first.steps[0]!.results as { url: string; expiresAt: string };
    expect(cb.url).toMatch(/^http:\/\/runner\.test\/callbacks\/tok\d+$/);
    expect(minutes(cb.expiresAt) / 60 / 24).toBeCloseTo(2, 2);
    expect(host.created[0]).toMatchObject({ executionId: first.id, step: 'cb', expiresAt: cb.expiresAt });
    expect(first.waitingFor).toEqual({ step: 'w', kind: 'callback', callbackUrl: cb.url });
    expect(first.wakeAt).toBeUndefined();
    expect(first.steps[2]).toMatchObject({ status: 'waiting', callback: host.tokenOf(cb.url) });

    // Woken without a request (another wake-up): it waits again.
    const still = await start(yaml(), { durable: host, executionId: first.id, resume: structuredClone(first.steps) });
    expect(still.status).toBe('waiting');
    expect(host.created).toHaveLength(1); // the callback step was not run again

    host.receive(cb.url, { body: { approved: true }, headers: { 'x-by': 'manager' } });
    const done = await start(yaml(), { durable: host, executionId: first.id, resume: structuredClone(first.steps) });
    expect(done.status).toBe('succeeded');
    expect(done.steps[2]!.results).toMatchObject({
      method: 'POST',
      body: { approved: true },
      headers: { 'x-by': 'manager' },
      receivedAt: expect.any(String),
    });
    expect(done.result).toEqual({ approved: true });
  });

  it('a timeout that has passed fails the step with code timeout, and onError applies', async () => {
    const host = memoryDurableHost();
    for (const onError of ['fail', 'continue']) {
      const first = await start(yaml(', timeout: 2d', onError), { durable: host });
      expect(first.status).toBe('waiting');
      expect(minutes(first.wakeAt) / 60 / 24).toBeCloseTo(2, 2);
      expect(first.waitingFor).toMatchObject({ kind: 'callback', timeoutAt: first.wakeAt });
      const timedOut = structuredClone(first.steps);
      timedOut[2]!.wakeAt = new Date(Date.now() - 1).toISOString();
      const r = await start(yaml(', timeout: 2d', onError), { durable: host, executionId: first.id, resume: timedOut });
      if (onError === 'fail') {
        expect(r.status).toBe('failed');
        expect(r.error).toMatchObject({ step: 'w', code: 'timeout', message: expect.stringContaining('before the timeout (2d') });
      } else {
        expect(r.status).toBe('succeeded');
        expect(r.result).toBe('timeout');
      }
    }
  });

  it('a URL this host did not make, or an unknown token, fails the step naming the URL', async () => {
    const host = memoryDurableHost();
    const foreign = await start(webhook(`  - id: w\n    action: core.wait\n    inputs: { callback: "https://elsewhere.example/callbacks/x" }\n`), {
      durable: host,
    });
    expect(foreign.status).toBe('failed');
    expect((foreign.error as { message: string }).message).toContain('callback https://elsewhere.example/callbacks/x was not made by this host');
    const unknown = await start(webhook(`  - id: w\n    action: core.wait\n    inputs: { callback: "http://runner.test/callbacks/nope" }\n`), {
      durable: host,
    });
    expect(unknown.error).toMatchObject({
      code: 'callback_unknown',
      message: expect.stringContaining('http://runner.test/callbacks/nope is unknown'),
    });
  });
});

describe('checkpoints', () => {
  it('read-only actions are not followed by a checkpoint; core.callback and core.http are', async () => {
    let server: Server | undefined;
    server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const saved: string[] = [];
      const r = await start(
        webhook(`  - id: t
    action: core.transform
    inputs: { value: 1 }
  - id: split
    action: core.splitString
    inputs: { string: "a,b" }
  - id: log
    action: core.log
    inputs: { message: hi }
  - id: cb
    action: core.callback
  - id: post
    action: core.http
    inputs: { url: "${base}/x", method: POST }
  - id: respond
    action: core.respond
    inputs: { body: ok }
`),
        { durable: memoryDurableHost(), checkpoint: async (rec) => void saved.push(rec.steps.at(-1)!.id) },
      );
      expect(r.status).toBe('succeeded');
      expect(saved).toEqual(['cb', 'post']);
    } finally {
      await new Promise((r) => server!.close(r));
    }
  });
});

describe('cancel', () => {
  let server: Server;
  let base: string;
  let aborted = 0;
  beforeAll(async () => {
    server = createServer((req, res) => {
      // Never answers /slow: only an aborted request ends it.
      if (req.url === '/slow') {
        req.on('close', () => aborted++);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  });

  const yaml = () =>
    webhook(
      `  - id: slow
    onError: continue
    action: core.http
    inputs: { url: "${base}/slow", method: POST, timeoutMs: 60000 }
  - id: next
    action: core.log
    inputs: { message: never }
`,
      `onFailure:
  - id: alarm
    action: core.log
    inputs: { message: failed }
`,
    );

  it("aborts the running step's request and ends the run cancelled at the next boundary, without onFailure", async () => {
    const cancel = new AbortController();
    const t0 = Date.now();
    setTimeout(() => cancel.abort(), 200);
    const r = await start(yaml(), { cancel: cancel.signal });
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(r.status).toBe('cancelled');
    expect(r.steps.map((s) => s.id)).toEqual(['slow']);
    expect(r.onFailure).toBeUndefined();
    await new Promise((res) => setTimeout(res, 50));
    expect(aborted).toBe(1);
  });

  it('a shutdown during a step with onError continue ends the run there, with no checkpoint of that failure (it runs again when resumed)', async () => {
    const shutdown = new AbortController();
    setTimeout(() => shutdown.abort(), 200);
    const saved: string[] = [];
    const r = await start(yaml(), { signal: shutdown.signal, checkpoint: async (rec) => void saved.push(rec.steps.at(-1)!.id) });
    expect(r.status).toBe('failed');
    expect(r.steps.map((s) => `${s.id}:${s.status}`)).toEqual(['slow:failed']);
    expect(saved).toEqual([]);
    expect(r.onFailure).toBeUndefined();
  });

  it('a run cancelled before it starts runs no step', async () => {
    const cancel = new AbortController();
    cancel.abort();
    const r = await start(yaml(), { cancel: cancel.signal });
    expect(r.status).toBe('cancelled');
    expect(r.steps).toEqual([]);
  });
});

describe('read-only actions', () => {
  it('HCM actions are read-only exactly when they GET (derived from the declaration, not written per action)', () => {
    const gets = hcmActions.filter((a) => !a.request.raw && a.request.method === 'GET');
    expect(gets.length).toBeGreaterThan(10);
    for (const a of hcmActions) expect(a.readOnly === true, a.key).toBe(!a.request.raw && a.request.method === 'GET');
  });
});

describe('waits in called integrations', () => {
  it('a child that stops at core.wait fails the calling step clearly (the parent would not be woken by it)', async () => {
    const host = memoryDurableHost();
    const child = compile('name: later\ntrigger: { type: call }\nsteps:\n  - id: w\n    action: core.wait\n    inputs: { for: 1h }\n');
    const call = callHost(
      (n) => (n === 'later' ? child : undefined),
      (integration, run) => runExecution({ integration, services: testServices(), durable: host, ...run }),
    );
    const r = await start(webhook('  - id: callIt\n    action: core.call\n    inputs: { integration: later }\n'), { durable: host, call });
    expect(r.status).toBe('failed');
    expect(r.error).toMatchObject({ step: 'callIt', code: 'child_waiting', message: expect.stringContaining('a called integration cannot wait') });
  });
});

describe('waits in onFailure', () => {
  it('do not suspend the failed execution: onFailure fails saying it cannot wait', async () => {
    const r = await start(
      webhook(
        '  - id: boom\n    action: core.fail\n    inputs: { message: x }\n',
        'onFailure:\n  - id: w\n    action: core.wait\n    inputs: { for: 1h }\n',
      ),
      {
        durable: memoryDurableHost(),
      },
    );
    expect(r.status).toBe('failed');
    expect(r.wakeAt).toBeUndefined();
    expect(r.onFailure).toMatchObject({
      status: 'failed',
      error: { message: expect.stringContaining('step w (core.wait) cannot wait in onFailure') },
    });
  });
});

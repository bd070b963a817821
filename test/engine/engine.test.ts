/** The engine's step options: if, forEach, retry, timeoutMs, onError; config and env values. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { retryDelay } from '../../src/engine/step-attempts.js';
import { run } from '../helpers/engine.js';

const webhook = (steps: string, extra = '') => `name: t\n${extra}trigger: { type: webhook }\nsteps:\n${steps}`;

/** A small third-party fake: /flaky fails the first N calls per key, /slow answers late. */
let server: Server;
let base: string;
const calls = new Map<string, number>();
beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    const key = url.searchParams.get('key') ?? '';
    const n = (calls.get(key) ?? 0) + 1;
    calls.set(key, n);
    if (url.pathname === '/flaky' && n <= Number(url.searchParams.get('fail') ?? 0)) {
      res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"down"}');
    } else if (url.pathname.startsWith('/missing')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"no such thing"}');
    } else if (url.pathname === '/slow') {
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"slow":true}'), 400);
    } else {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ n, path: url.pathname }));
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((r) => server.close(r)));

describe('steps', () => {
  it('passes results between steps and records each step', async () => {
    const r = await run(
      webhook(
        `  - id: a\n    action: core.transform\n    inputs: { value: "{% body.data.n * 2 %}" }\n  - id: b\n    action: core.transform\n    inputs: { value: "{% $steps.a + 1 %}" }\n`,
      ),
      { n: 20 },
    );
    expect(r.status).toBe('succeeded');
    expect(r.steps.map((s) => [s.id, s.status, s.results])).toEqual([
      ['a', 'succeeded', 40],
      ['b', 'succeeded', 41],
    ]);
    expect(r.result).toBe(41);
    expect(r.log.map((l) => [l.level, l.step, l.message.replace(/[\d.]+ ms/, 'N ms')])).toEqual([
      ['debug', 'a', 'step a (core.transform) succeeded in N ms'],
      ['debug', 'b', 'step b (core.transform) succeeded in N ms'],
    ]);
    expect(r.steps[0]!.startedAt <= r.steps[0]!.finishedAt!).toBe(true);
  });

  it('skips a step whose if is false', async () => {
    const r = await run(webhook(`  - id: a\n    action: core.transform\n    if: "{% body.data.type = 'hire' %}"\n    inputs: { value: 1 }\n`), {
      type: 'fire',
    });
    expect(r.steps[0]).toMatchObject({ id: 'a', status: 'skipped' });
    expect(r.steps[0]!.results).toBeUndefined();
  });

  it('runs forEach once per item with $item and $index; results are the array', async () => {
    const r = await run(
      webhook(
        `  - id: each\n    action: core.transform\n    forEach: "{% body.data.names %}"\n    inputs: { value: "{% $index & ':' & $item %}" }\n`,
      ),
      { names: ['ada', 'bob', 'cy'] },
    );
    expect(r.steps[0]!.results).toEqual(['0:ada', '1:bob', '2:cy']);
  });

  it('fails the execution with the integration, step and action named', async () => {
    const r = await run(
      webhook(
        `  - id: boom\n    action: core.fail\n    inputs: { message: "{% 'no ' & body.data.x %}" }\n  - id: never\n    action: core.log\n    inputs: { message: x }\n`,
      ),
      { x: 'luck' },
    );
    expect(r.status).toBe('failed');
    expect(r.error).toMatchObject({ integration: 't', step: 'boom', action: 'core.fail', message: 'integration t, step boom (core.fail): no luck' });
    expect(r.steps.map((s) => s.id)).toEqual(['boom']);
  });

  it('onError: continue records $errors.<id> and goes on', async () => {
    const r = await run(
      webhook(
        `  - id: bad\n    action: core.fail\n    onError: continue\n    inputs: { message: nope }\n  - id: after\n    action: core.transform\n    inputs: { value: "{% $errors.bad.message %}" }\n`,
      ),
    );
    expect(r.status).toBe('succeeded');
    expect(r.steps[0]).toMatchObject({ status: 'failed' });
    expect(r.result).toContain('nope');
  });

  it('retries a failing step up to maxAttempts with the fixed delay', async () => {
    const r = await run(
      webhook(
        `  - id: call\n    action: core.http\n    retry: { maxAttempts: 3, delayMs: 10 }\n    inputs: { url: "${base}/flaky?fail=2&key=fixed" }\n`,
      ),
    );
    expect(r.status).toBe('succeeded');
    expect(r.steps[0]!.attempts).toBe(3);
    expect(r.log.filter((l) => l.message.includes('retrying')).length).toBe(2);
  });

  it('gives up after maxAttempts', async () => {
    const r = await run(
      webhook(
        `  - id: call\n    action: core.http\n    retry: { maxAttempts: 2, delayMs: 1 }\n    inputs: { url: "${base}/flaky?fail=5&key=giveup" }\n`,
      ),
    );
    expect(r.status).toBe('failed');
    expect(r.steps[0]!.attempts).toBe(2);
    expect(calls.get('giveup')).toBe(2);
    expect(r.error).toMatchObject({ status: 503, code: 'server_error', step: 'call', action: 'core.http' });
  });

  it('does not retry what another attempt cannot change (a 404, core.fail)', async () => {
    const r = await run(
      webhook(
        `  - id: call\n    action: core.http\n    retry: { maxAttempts: 3, delayMs: 1 }\n    inputs: { url: "${base}/missing-thing?key=404" }\n`,
      ),
    );
    expect(r.status).toBe('failed');
    expect(r.steps[0]!.attempts).toBe(1);
    expect(calls.get('404')).toBe(1);
    const failing = await run(
      webhook(`  - id: boom\n    action: core.fail\n    retry: { maxAttempts: 3, delayMs: 1 }\n    inputs: { message: no }\n`),
    );
    expect(failing.steps[0]!.attempts).toBe(1);
  });

  it('if follows JSONata truthiness: empty arrays, objects and strings are false', async () => {
    const r = await run(
      webhook(
        `  - id: a\n    action: core.transform\n    if: "{% body.data.list %}"\n    inputs: { value: 1 }\n  - id: b\n    action: core.transform\n    if: "{% body.data.full %}"\n    inputs: { value: 2 }\n`,
      ),
      { list: [], full: [0, 'x'] },
    );
    expect(r.steps.map((s) => s.status)).toEqual(['skipped', 'succeeded']);
  });

  it('exponential backoff doubles with jitter inside [base/2, base]', () => {
    const policy = { maxAttempts: 5, delayMs: 100, backoff: 'exponential' as const, maxDelayMs: 350 };
    expect(retryDelay(policy, 1, () => 0)).toBe(50);
    expect(retryDelay(policy, 1, () => 1)).toBe(100);
    expect(retryDelay(policy, 2, () => 1)).toBe(200);
    expect(retryDelay(policy, 3, () => 1)).toBe(350);
    expect(retryDelay({ ...policy, backoff: 'fixed' }, 4)).toBe(100);
  });

  it('timeoutMs fails an attempt that takes too long, and retry tries again', async () => {
    const r = await run(
      webhook(
        `  - id: slow\n    action: core.http\n    timeoutMs: 50\n    retry: { maxAttempts: 2, delayMs: 1 }\n    inputs: { url: "${base}/slow?key=t" }\n`,
      ),
    );
    expect(r.status).toBe('failed');
    expect(r.error?.message).toMatch(/timed out after 50 ms/);
    expect(calls.get('t')).toBe(2);
  });

  for (const timeout of ['', '    timeoutMs: 5000\n']) {
    it(`aborting the run cancels the request in flight${timeout ? ' (step with timeoutMs)' : ' (step without timeoutMs)'}`, async () => {
      const controller = new AbortController();
      const running = run(
        webhook(`  - id: slow\n    action: core.http\n${timeout}    inputs: { url: "${base}/slow?key=abort${timeout.length}" }\n`),
        {},
        { signal: controller.signal },
      );
      setTimeout(() => controller.abort(new Error('shutting down')), 50);
      const r = await running;
      // Not aborted, /slow answers 200 after 400 ms and the step succeeds.
      expect(r.status).toBe('failed');
      expect(r.steps[0]).toMatchObject({ id: 'slow', status: 'failed' });
    });
  }

  it('reads config and env values at run time; a missing env fails with its name', async () => {
    const yaml = webhook(
      `  - id: a\n    action: core.transform\n    inputs: { value: "{% $config.greeting & ' ' & $config.who %}" }\n`,
      `config:\n  greeting: hello\n  who: { env: HCM_TEST_WHO }\n`,
    );
    const ok = await run(yaml, {}, { env: { HCM_TEST_WHO: 'world' } });
    expect(ok.result).toBe('hello world');
    const missing = await run(yaml, {}, { env: {} });
    expect(missing.status).toBe('failed');
    expect(missing.error?.message).toMatch(/environment variable HCM_TEST_WHO is not set/);
  });

  it('exposes $execution', async () => {
    const r = await run(
      webhook(`  - id: a\n    action: core.transform\n    inputs: { value: "{% $execution %}" }\n`),
      {},
      { attempt: 2, test: true, executionId: 'e1' },
    );
    expect(r.result).toMatchObject({ id: 'e1', integration: 't', attempt: 2, test: true });
  });

  it('checks computed inputs against the action schema at run time', async () => {
    const r = await run(webhook(`  - id: a\n    action: core.respond\n    inputs: { statusCode: "{% body.data.code %}" }\n`), { code: 42 });
    expect(r.status).toBe('failed');
    expect(r.error?.message).toMatch(/input "statusCode" must be an integer from 200 to 599; got 42/);
    expect(r.error).toMatchObject({ code: 'invalid_input' });
  });
});

describe('expression guardrails', () => {
  it.each([
    ['a huge range', '[1..100000000]', /guardrail/],
    ['endless recursion', '($f := function($n) { $f($n + 1) }; $f(0))', /guardrail/],
    ['a long loop', '$reduce([1..5000000], function($a, $b) { $a + $b })', /guardrail/],
  ])('%s fails its step, not the process', async (_name, expr, message) => {
    const r = await run(webhook(`  - id: runaway\n    action: core.transform\n    inputs: { value: "{% ${expr} %}" }\n`));
    expect(r.status).toBe('failed');
    expect(r.error?.message).toMatch(message);
    expect(r.error).toMatchObject({ step: 'runaway', code: 'expression' });
  });

  it('reports an evaluation error with where the expression is written', async () => {
    const r = await run(webhook(`  - id: e\n    action: core.transform\n    inputs: { value: "{% $number('x') %}" }\n`));
    expect(r.error?.message).toMatch(/expression failed at steps\[0\]\.inputs\.value \(line 6, column \d+\)/);
  });
});

describe('function values', () => {
  // Functions are no JSON: JSONata's (built-ins, lambdas, partial applications) are dropped as
  // JavaScript functions are, never stored as `{"_jsonata_function":true}` or walked into.
  it.each([
    ['a built-in', '$uppercase'],
    ['a lambda', 'function($x){ $x }'],
    ['a partial application', '$substring(?, 1)'],
  ])('%s as a value is dropped', async (_name, expr) => {
    const r = await run(
      webhook(`  - id: f\n    action: core.transform\n    inputs: { value: { keep: 1, fn: "{% ${expr} %}", list: "{% [1, ${expr}] %}" } }\n`),
    );
    expect(r.status).toBe('succeeded');
    expect(r.result).toEqual({ keep: 1, list: [1, undefined] });
    expect(JSON.stringify(r.result)).toBe('{"keep":1,"list":[1,null]}');
  });

  it('data that only has the keys of a JSONata function is kept', async () => {
    const r = await run(webhook(`  - id: d\n    action: core.transform\n    inputs: { value: "{% $.body.data.x %}" }\n`), {
      x: { _jsonata_function: true, a: 1 },
    });
    expect(r.result).toEqual({ _jsonata_function: true, a: 1 });
  });
});

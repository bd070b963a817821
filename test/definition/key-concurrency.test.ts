/** `concurrency: {key, limit}` at the top of a file: compiled, and refused at line:col when malformed. */
import { describe, expect, it } from 'vitest';
import { loadText } from '../../src/definition/load.js';
import { concurrencyKeyOf, MAX_CONCURRENCY_KEY_BYTES } from '../../src/engine/concurrency-key.js';

const file = (concurrency: string) =>
  `name: t\nconcurrency: ${concurrency}\ntrigger: { type: webhook }\nsteps:\n  - { id: s, action: core.log, inputs: { message: m } }\n`;

describe('concurrency: at the top of a file', () => {
  it('compiles a key with its limit (default 1), and a limit alone', () => {
    const keyed = loadText('x.yaml', file('{ key: "{% $trigger.body.data.workerId %}" }'));
    expect(keyed.problems).toEqual([]);
    expect(keyed.integration?.concurrency?.limit).toBe(1);
    expect(keyed.integration?.concurrency?.key).toBeDefined();
    const whole = loadText('x.yaml', file('{ limit: 3 }'));
    expect(whole.problems).toEqual([]);
    expect(whole.integration?.concurrency).toEqual({ limit: 3 });
  });

  it.each([
    ['{ limit: 0 }', /limit/],
    ['{ key: "workerId" }', /key/],
    ['{ key: "{% $trigger.body.id %}", extra: 1 }', /extra/],
    ['{}', /concurrency must not be empty: give key and\/or limit/],
    ['{ key: "{% $steps.a %}" }', /before any step runs/],
  ])('refuses %s at its line', (value, message) => {
    const problems = loadText('x.yaml', file(value)).problems;
    expect(problems.length).toBeGreaterThan(0);
    expect(problems[0]!.message).toMatch(message);
    expect(problems[0]!.line).toBe(2);
  });

  it('evaluates the key when the execution is created: nothing or not a string gives none (logged), long keys are hashed', async () => {
    const integration = loadText('x.yaml', file('{ key: "{% $trigger.id %}" }')).integration!;
    const warnings: string[] = [];
    const ctx = { executionId: 'e1', env: {}, logger: { warn: (_o: object, m: string) => warnings.push(m) } };
    expect(await concurrencyKeyOf(integration, { id: 'w-1' }, ctx)).toBe('w-1');
    expect(await concurrencyKeyOf(integration, {}, ctx)).toBeUndefined();
    expect(await concurrencyKeyOf(integration, { id: { a: 1 } }, ctx)).toBeUndefined();
    expect(warnings).toHaveLength(2);
    expect(warnings[1]).toMatch(/concurrency.key of t: .*not a string/);
    const long = 'x'.repeat(MAX_CONCURRENCY_KEY_BYTES + 1);
    expect(await concurrencyKeyOf(integration, { id: long }, ctx)).toMatch(/^sha256:[0-9a-f]{64}$/);
  });
});

/** Validation of groups, switches, concurrency, onFailure, step-id uniqueness, $steps scoping and core.call across files, at line:col. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadFiles, loadText } from '../../src/definition/load.js';
import type { Problem } from '../../src/definition/types.js';

const head = 'name: t\ntrigger: { type: webhook }\nsteps:\n';
const log = (id: string) => `{ id: ${id}, action: core.log, inputs: { message: m } }`;

function only(yaml: string): Problem {
  const p = loadText('x.yaml', yaml).problems;
  expect(p, JSON.stringify(p, null, 2)).toHaveLength(1);
  return p[0]!;
}

describe('groups and switches', () => {
  it('a valid file with a forEach group, a switch and onFailure compiles, nested', () => {
    const r = loadText(
      'x.yaml',
      `${head}  - id: list
    action: core.transform
    inputs: { value: [1, 2] }
  - id: each
    forEach: "{% $steps.list %}"
    concurrency: 5
    steps:
      - id: dates
        action: core.transform
        inputs: { value: "{% $item %}" }
      - id: greet
        if: "{% $steps.dates > 1 and $count($steps.list) > 0 %}"
        action: core.log
        inputs: { message: hi }
  - id: route
    switch:
      cases:
        - { name: a, when: "{% $steps.each[0].dates = 1 %}", steps: [ ${log('inA')} ] }
      default: [ ${log('inDefault')} ]
onFailure:
  - { id: alert, action: core.log, inputs: { message: "{% $failure.error.message & $string($steps.list) %}" } }
`,
    );
    expect(r.problems).toEqual([]);
    const [, each, route] = r.integration!.steps;
    expect(each!.concurrency).toBe(5);
    expect(each!.steps!.map((s) => s.id)).toEqual(['dates', 'greet']);
    expect(route!.switch!.cases[0]!.steps[0]!.id).toBe('inA');
    expect(route!.switch!.default![0]!.id).toBe('inDefault');
    expect(r.integration!.onFailure![0]!.id).toBe('alert');
  });

  it('action and steps together', () => {
    const p = only(`${head}  - id: a\n    action: core.log\n    steps: [ ${log('x')} ]\n`);
    expect(p).toMatchObject({ line: 6, column: 5 });
    expect(p.message).toMatch(/has both `action` and `steps`.*move the action into the group/);
  });

  it('a step with neither action, steps nor switch', () => {
    const p = only(`${head}  - id: a\n    if: true\n`);
    expect(p).toMatchObject({ line: 4, column: 5 });
    expect(p.message).toContain('missing required key "action" (or `steps` for a group');
  });

  it('retry and timeoutMs on a group', () => {
    const p = loadText('x.yaml', `${head}  - id: g\n    retry: { maxAttempts: 2 }\n    timeoutMs: 5\n    steps: [ ${log('x')} ]\n`).problems;
    expect(p.map((x) => [x.line, x.column])).toEqual([
      [5, 5],
      [6, 5],
    ]);
    expect(p[0]!.message).toBe('retry is for action steps only and step "g" is a group: put `retry` on the action steps inside it');
  });

  it('concurrency outside 1–50', () => {
    for (const n of [0, 51]) {
      const p = only(`${head}  - id: g\n    forEach: [1]\n    concurrency: ${n}\n    steps: [ ${log('x')} ]\n`);
      expect(p).toMatchObject({ line: 6, column: 18 });
      expect(p.message).toContain('must be between 1 and 50');
    }
  });

  it('concurrency without forEach, on an action step too', () => {
    const p = only(`${head}  - id: a\n    concurrency: 2\n    action: core.log\n    inputs: { message: m }\n`);
    expect(p).toMatchObject({ line: 5, column: 5 });
    expect(p.message).toContain('concurrency needs forEach');
  });

  it('an empty cases list', () => {
    const p = only(`${head}  - id: s\n    switch:\n      cases: []\n`);
    expect(p).toMatchObject({ line: 6, column: 14 });
    expect(p.message).toContain('switch "s" has no cases: add at least one');
  });

  it('a duplicate id at any depth, in onFailure and in appEvent subscribe', () => {
    const nested = only(`${head}  - ${log('d')}\n  - id: g\n    steps:\n      - id: inner\n        steps: [ ${log('d')} ]\n`);
    expect(nested).toMatchObject({ line: 8, column: 24, path: '/steps/1/steps/0/steps/0/id' });
    expect(nested.message).toBe(
      'step id "d" is taken by steps[0]; step ids must be unique in the whole file (nested steps, onFailure and trigger steps included) — rename one of them',
    );
    const onFailure = only(`${head}  - ${log('d')}\nonFailure:\n  - ${log('d')}\n`);
    expect(onFailure).toMatchObject({ line: 6, column: 11, path: '/onFailure/0/id' });
    const sub = only(`name: t\ntrigger:\n  type: appEvent\n  subscribe: [ ${log('d')} ]\nsteps:\n  - ${log('d')}\n`);
    expect(sub).toMatchObject({ line: 6, column: 11, path: '/steps/0/id' });
  });

  it('nested steps count against the step limit', () => {
    const r = loadText('x.yaml', `${head}  - id: g\n    steps: [ ${log('a')}, ${log('b')} ]\n`, { maxFileBytes: 100_000, maxSteps: 2 });
    expect(r.problems).toHaveLength(1);
    expect(r.problems[0]!.message).toMatch(/^steps has 3 steps; at most 2 are allowed/);
    expect(r.problems[0]!.path).toBe('/steps/0/steps/1');
  });
});

describe('$steps scoping', () => {
  it('a step inside a forEach group read from outside says how to reach it', () => {
    const p = only(`${head}  - id: each
    forEach: [1]
    steps:
      - ${log('dates')}
  - id: after
    action: core.log
    inputs: { message: "{% $steps.dates %}" }
`);
    expect(p).toMatchObject({ line: 10, column: 24 });
    expect(p.message).toContain('$steps.dates is inside group "each"');
    expect(p.message).toContain('$steps.each[0].dates');
  });

  it('through nested blocks and a switch, from inside a sibling group', () => {
    const p = only(`${head}  - id: outer
    steps:
      - id: route
        switch:
          cases: [ { name: a, when: true, steps: [ { id: deep, forEach: [1], steps: [ ${log('leaf')} ] } ] } ]
  - id: other
    steps:
      - id: reader
        action: core.log
        inputs: { message: "{% $steps.leaf %}" }
`);
    expect(p.message).toContain('$steps.outer.route.deep[0].leaf');
  });

  it('a later step, a step of another iteration-free block that has not run, and onFailure steps from steps', () => {
    const later = only(`${head}  - id: a\n    action: core.log\n    inputs: { message: "{% $steps.b %}" }\n  - ${log('b')}\n`);
    expect(later.message).toContain('"b" runs later');
    expect(later).toMatchObject({ line: 6, column: 24 });
    const inner = only(
      `${head}  - id: g\n    steps:\n      - id: x\n        action: core.log\n        inputs: { message: "{% $steps.y %}" }\n      - ${log('y')}\n`,
    );
    expect(inner.message).toContain('"y" runs later');
    const fromFailure = only(
      `${head}  - id: a\n    action: core.log\n    inputs: { message: "{% $steps.alert %}" }\nonFailure: [ ${log('alert')} ]\n`,
    );
    expect(fromFailure.message).toContain('"alert" is a step of onFailure');
  });

  it('inside a block: earlier steps of the block and of every enclosing block are readable; the group itself is not', () => {
    const ok = loadText(
      'x.yaml',
      `${head}  - ${log('top')}\n  - id: g\n    steps:\n      - ${log('x')}\n      - id: h\n        steps:\n          - { id: y, action: core.log, inputs: { message: "{% $steps.top & $steps.x %}" } }\n`,
    );
    expect(ok.problems).toEqual([]);
    const self = only(`${head}  - id: g\n    steps:\n      - { id: y, action: core.log, inputs: { message: "{% $steps.g %}" } }\n`);
    expect(self.message).toContain('$steps.g does not name an earlier step');
  });
});

describe('core.call across the folder', () => {
  function folder(files: Record<string, string>): Problem[] {
    const dir = mkdtempSync(join(tmpdir(), 'calls-'));
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    return loadFiles(Object.keys(files).map((f) => join(dir, f))).flatMap((l) => l.problems.map((p) => ({ ...p, file: p.file.split('/').pop()! })));
  }
  const caller = (name: string, trigger: string, callee: string) =>
    `name: ${name}\ntrigger: { type: ${trigger} }\nsteps:\n  - id: c\n    action: core.call\n    inputs: { integration: ${callee}, input: {} }\n`;

  it('a call of a call integration is fine', () => {
    expect(folder({ 'a.yaml': caller('a', 'webhook', 'b'), 'b.yaml': `name: b\ntrigger: { type: call }\nsteps: [ ${log('x')} ]\n` })).toEqual([]);
  });

  it('an unknown integration, and one whose trigger is not call', () => {
    const p = folder({ 'a.yaml': caller('a', 'webhook', 'nope'), 'h.yaml': caller('h', 'webhook', 'a') });
    expect(p.map((x) => [x.file, x.line, x.column])).toEqual([
      ['a.yaml', 6, 28],
      ['h.yaml', 6, 28],
    ]);
    expect(p[0]!.message).toContain('core.call of unknown integration "nope"');
    expect(p[1]!.message).toContain('core.call of "a", whose trigger is webhook: core.call runs only integrations whose trigger is `type: call`');
  });

  it('a cycle of calls, reported in each file of the cycle', () => {
    const p = folder({ 'a.yaml': caller('a', 'call', 'b'), 'b.yaml': caller('b', 'call', 'c'), 'c.yaml': caller('c', 'call', 'a') });
    expect(p.map((x) => x.file)).toEqual(['a.yaml', 'b.yaml', 'c.yaml']);
    expect(p[0]!.message).toBe('calls form a cycle: a → b → c → a; a sub-flow may not call itself, directly or through others — break the cycle');
    expect(p[0]).toMatchObject({ line: 6, column: 28 });
  });
});

/**
 * `surelyCompiles` (src/definition/expression-check.ts) lets an expression's compile wait until it
 * runs; it must never say so of an expression jsonata refuses. Held against jsonata itself on the
 * expressions of the fixtures, docs and benchmark files, hand-written cases and their mutations;
 * and loading still reports a syntax error where it is written.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import jsonata from 'jsonata';
import { describe, expect, it } from 'vitest';
import { generatedYaml } from '../../bench/lib/integrations.js';
import { filesBelow } from '../helpers/files.js';
import { seededRandom } from '../helpers/random.js';
import { surelyCompiles } from '../../src/definition/expression-check.js';
import { loadText } from '../../src/definition/load.js';

const root = join(import.meta.dirname, '..', '..');

const texts = [
  ...filesBelow(join(root, 'test'), /\.(ya?ml|ts)$/).map((f) => readFileSync(f, 'utf8')),
  ...filesBelow(join(root, 'docs'), /\.md$/).map((f) => readFileSync(f, 'utf8')),
  ...[0, 1, 9].map(generatedYaml),
];
const found = new Set<string>();
for (const t of texts) for (const m of t.matchAll(/\{%([^%]*)%\}/g)) found.add(m[1]!);

const cases = [
  '$trigger.body.data.workerId',
  " {'id': $trigger.body.data.workerId, 'big': $trigger.body.data.amount > $config.threshold} ",
  "$steps.check.big ? 'yes' : 'no'",
  '$a ? $b ? 1 : 2 : 3',
  '$a ? 1 : 2 : 3',
  '$a ? 1',
  '$string($x) & "-" & $number("1")',
  '$f()',
  '$f(,)',
  '$f(1,)',
  '$f(?)',
  '$f(1)(2)',
  'f(1)',
  '$f(1).a.b',
  '$.a',
  '$',
  '$$',
  '$a.$b',
  '$a.5',
  '$a.true',
  "$a.'b'",
  '$a."b"',
  '"a".b',
  '(1).a',
  '[1].a',
  '{}.a',
  'a.b.c',
  'a.b(1)',
  'a[0]',
  'a{"x": b}',
  '-$a',
  '--1',
  '- -1',
  '-',
  '1 -',
  '1 + * 2',
  '1 2',
  'a b',
  '(1 + 2) * 3',
  '()',
  '(1; 2)',
  '[]',
  '[1, 2, [3]]',
  '[1, 2,]',
  '[1..3]',
  '{}',
  "{'a': 1, 'b': {'c': [1, 2]}}",
  "{'a': 1,}",
  "{'a'}",
  "{'a': }",
  '{a: 1}',
  '1 = 1 and 2 != 3 or 4 <= 5 and 6 >= 7 or 8 < 9 and 10 > 11',
  '1 in [1, 2]',
  'and',
  'a and',
  'or b',
  'in',
  'true and false or null',
  '1 % 2 / 3 * 4 - 5 + 6 & "x"',
  '1.5 + 0.25 + 1e3 + 2E-2 + 0',
  '1e999',
  '01',
  '1.',
  '.5',
  '"unterminated',
  "'it''s'",
  '"esc\\"aped"',
  "'\\u0041'",
  '"\\q"',
  '`name with space`',
  '/* comment */ 1',
  '1 /* comment',
  '$a ~> $b()',
  '$a := 1',
  '$a ?: 1',
  '$a ?? 1',
  'a.*',
  '**.a',
  '%.a',
  'a@$x',
  'a#$i',
  'a^(b)',
  '$a | $b',
  '!a',
  '~a',
  'function($x) { $x }',
  'λ($x) { $x }',
  '/regex/',
  '1 / 2',
  'a.b / 2',
  '-/x/',
  '$a.b.c = "x" ? $a.b : $c',
  '$a\n  .b',
  'ünïcode',
  "a'b'",
  '$a$b',
  '',
  ' ',
];

/** Small deterministic changes to valid expressions: where a recogniser would go wrong. */
function* mutations(text: string, count: number, seed: number): Generator<string> {
  const rnd = seededRandom(seed);
  const inserts = [
    '.',
    ',',
    ':',
    '?',
    '(',
    ')',
    '[',
    ']',
    '{',
    '}',
    '-',
    '+',
    '*',
    '/',
    '%',
    '&',
    '=',
    '!',
    '<',
    '>',
    '$',
    "'",
    '"',
    ' ',
    'and ',
    ' or ',
    'in',
    'true',
    '1',
    '0',
    'e',
    '`',
    '\\',
    '..',
    '~>',
    ':=',
    '/*',
    '#',
    '@',
    '^',
    '|',
  ];
  for (let i = 0; i < count && text.length > 0; i++) {
    const at = rnd(text.length);
    if (rnd(3) === 0) yield text.slice(0, at) + text.slice(at + 1 + rnd(2));
    else yield text.slice(0, at) + inserts[rnd(inserts.length)] + text.slice(at);
  }
}

function compiles(body: string): boolean {
  try {
    jsonata(body);
    return true;
  } catch {
    return false;
  }
}

describe('surelyCompiles', () => {
  it('never vouches for an expression jsonata refuses', () => {
    const all = [...found, ...cases];
    let vouched = 0;
    let n = 0;
    for (const [i, body] of all.entries()) {
      for (const b of [body, ...mutations(body, 80, i + 1)]) {
        n++;
        if (!surelyCompiles(b)) continue;
        vouched++;
        expect(compiles(b), b).toBe(true);
      }
    }
    // It must also be useful: most of what integrations write is in its subset.
    expect(vouched).toBeGreaterThan(n / 10);
  });

  it('covers the expressions of the generated benchmark files', () => {
    for (const i of [0, 9]) for (const m of generatedYaml(i).matchAll(/\{%([^%]*)%\}/g)) expect(surelyCompiles(m[1]!), m[1]).toBe(true);
  });

  it('leaves crafted nesting to jsonata at load: a problem with its position, not a crash', () => {
    for (const expr of [`${'('.repeat(50_000)}1${')'.repeat(50_000)}`, '['.repeat(30_000) + ']'.repeat(30_000), `$a${'.b'.repeat(50_000)}`]) {
      expect(surelyCompiles(expr)).toBe(false);
      const loaded = loadText(
        'deep.yaml',
        `name: deep\ntrigger: {type: webhook}\nsteps:\n  - id: a\n    action: core.transform\n    inputs: { value: "{% ${expr} %}" }\n`,
      );
      expect(loaded.integration).toBeUndefined();
      expect(loaded.problems[0]).toMatchObject({ file: 'deep.yaml', line: 6 });
    }
  });

  it('leaves syntax errors to be reported at load, at their line and column', () => {
    const { problems } = loadText(
      'x.yaml',
      'name: t\ntrigger: { type: webhook }\nsteps:\n  - id: a\n    action: core.transform\n    inputs:\n      value: "{% $a + %}"\n',
    );
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ line: 7, path: '/steps/0/inputs/value' });
    expect(problems[0]!.message).toMatch(/^expression does not parse: /);
  });

  it('compiles a deferred expression when it first runs, to what jsonata gives', async () => {
    const { integration } = loadText(
      'x.yaml',
      'name: t\ntrigger: { type: webhook }\nsteps:\n  - id: a\n    action: core.transform\n    inputs:\n      value: "{% {\'n\': $x.y + 1} %}"\n',
    );
    const t = integration!.steps[0]!.inputs;
    expect(t.kind).toBe('object');
    const value = (t as { entries: Array<[string, { kind: string; expression: { evaluate(i: unknown, b: unknown): Promise<unknown> } }]> })
      .entries[0]![1];
    expect(value.kind).toBe('expr');
    expect(await value.expression.evaluate(null, { x: { y: 41 } })).toEqual({ n: 42 });
    expect(value.expression).toBe(value.expression);
  });
});

/**
 * engine/direct-expression.ts answers exactly what JSONata answers — compared on data made to
 * trip it (arrays where fields are expected, singleton arrays, prototype names, `__proto__` keys,
 * objects JSONata takes for functions, integer-like keys) — and is really used for the shapes it
 * claims, so the comparison is not won by always falling back.
 */
import jsonata from 'jsonata';
import { describe, expect, it } from 'vitest';
import { expressionLimits } from '../../src/definition/templates.js';
import type { ValueTemplate } from '../../src/definition/types.js';
import { directEvaluator, MISS } from '../../src/engine/direct-expression.js';
import { evaluateTemplate, toPlain, type Scope } from '../../src/engine/evaluate.js';

const data = {
  workerId: 'W1',
  zero: 0,
  no: false,
  nothing: null,
  arr: [1, 2],
  single: [5],
  nested: [[1], [2]],
  objs: [{ a: 1 }, { a: 2 }],
  oneObj: [{ a: 1 }],
  empty: {},
  emptyArr: [],
  str: 'abc',
  withProto: JSON.parse('{"__proto__": {"x": 1}, "y": 2}'),
  lambda: { _jsonata_lambda: true, a: 1 },
  fn: { _jsonata_function: true, a: 1 },
  '1': 'one',
  'a b': 'space',
  deep: { a: { b: { c: 'deep' } } },
};
const trigger = { body: { data }, headers: { 'content-type': 'application/json' } };
const baseScope = (): Scope => ({
  trigger,
  // A field only on the prototype: JSONata reads own fields alone.
  steps: { shape: { workerId: 'W1', list: [{ id: 1 }] }, inherited: Object.create({ x: 'from the prototype' }) },
  errors: {},
  config: { region: 'eu' },
  execution: { id: 'e-1', integration: 'x' },
  state: {},
  env: {},
});

/** Expressions the direct evaluator must answer itself (for this data), and ones it must leave to JSONata. */
const DIRECT = [
  '$trigger.body.data.workerId',
  '$trigger.body.data.zero',
  '$trigger.body.data.no',
  '$trigger.body.data.nothing',
  '$trigger.body.data.arr',
  '$trigger.body.data.single',
  '$trigger.body.data.nested',
  '$trigger.body.data.objs',
  '$trigger.body.data.oneObj',
  '$trigger.body.data.empty',
  '$trigger.body.data.emptyArr',
  '$trigger.body.data.str.length',
  '$trigger.body.data.missing.x',
  '$trigger.body.data.constructor',
  '$trigger.body.data.toString',
  '$trigger.body.data.withProto.x',
  '$trigger.body.data.withProto.`__proto__`',
  '$trigger.body.data.withProto.`__proto__`.x',
  '$trigger.body.data."1"',
  '$trigger.body.data.`a b`',
  '$trigger.body.data.deep',
  '$trigger.body.data.deep.a.b.c',
  '$trigger.nope',
  '$steps.shape.workerId',
  '$steps.shape.list',
  '$steps.nope.workerId',
  '$steps.inherited.x',
  '$execution.id',
  '$execution',
  '$config.region',
  '$state',
  '$errors',
  '$',
  '$.body.data.workerId',
  'body.data.workerId',
  'body',
  "'text'",
  '"text"',
  '1.5',
  '-5',
  'true',
  'false',
  'null',
  "{'workerId': $trigger.body.data.workerId, 'source': $trigger.body.data.source}",
  "{'a': $trigger.body.data.missing}",
  "{'b': 1, '1': 2, 'a': 'x', '0': 0}",
  "{'__proto__': 1, 'x': 2}",
  "{'x': {'y': $trigger.body.data.arr, 'z': $trigger.body.data.single}}",
  "{'x': [$trigger.body.data.workerId, [1], [$trigger.body.data.workerId]]}",
  "{'list': $steps.shape.list, 'e': $execution.id, 'n': $trigger.body.data.nothing}",
  '[1, 2]',
  '[]',
  "[[1], $trigger.body.data.missing, 'x', [[2]]]",
  '{}',
];
const VIA_JSONATA = [
  '$trigger.body.data.objs.a', // an array on the way: JSONata maps over it
  '$trigger.body.data.oneObj.a',
  '$trigger.body.data.arr.x',
  '$trigger.body.data.lambda.a', // JSONata takes it for a function
  '$trigger.body.data.fn.a',
  '[$trigger.body.data.arr]', // JSONata splices the array in
  '[$trigger.body.data.single, 3]',
  '$nope',
  '$item',
  '$index',
  '$string',
  '$$.body',
  '$trigger.body.data.arr[0]',
  '$trigger.body.data.arr[]',
  '$trigger.body.data.{"a": 1}',
  "{'a': 1, 'a': 2}", // D1009
  "{'_jsonata_lambda': 1}", // D1013
  "$trigger.body.data.workerId & 'x'",
  '$count($trigger.body.data.arr)',
  '($trigger.body.data.workerId)',
  '$steps.shape.list.id',
];

const template = (source: string): Extract<ValueTemplate, { kind: 'expr' }> => ({
  kind: 'expr',
  source,
  expression: jsonata(source, expressionLimits),
  pointer: '/steps/0/inputs/value',
  position: { line: 1, column: 1 },
});

/** What JSONata alone answers, as evaluateTemplate would shape it (value, or the error's code). */
async function byJsonata(source: string, scope: Scope): Promise<{ value?: unknown; error?: string }> {
  const bindings: Record<string, unknown> = {
    trigger: scope.trigger,
    steps: scope.steps,
    errors: scope.errors,
    config: scope.config,
    execution: scope.execution,
    state: scope.state,
  };
  if ('item' in scope) bindings.item = scope.item;
  if (scope.index !== undefined) bindings.index = scope.index;
  try {
    return { value: toPlain(await jsonata(source, expressionLimits).evaluate('input' in scope ? scope.input : scope.trigger, bindings)) };
  } catch (err) {
    return { error: (err as { code?: string }).code ?? String(err) };
  }
}

async function byTemplate(source: string, scope: Scope): Promise<{ value?: unknown; error?: string }> {
  try {
    return { value: await evaluateTemplate(template(source), scope) };
  } catch (err) {
    return { error: /: (\w\d{4})?/.exec(String((err as Error).message)) ? String((err as Error).message) : String(err) };
  }
}

/** Key order, undefined, the array/object difference and plain prototypes all count. */
function strict(v: unknown): string {
  if (v === undefined) return '<undefined>';
  if (v === null || typeof v !== 'object') return typeof v === 'function' ? '<function>' : JSON.stringify(v);
  if (Array.isArray(v))
    return `${Object.getPrototypeOf(v) === Array.prototype && !('sequence' in v) ? '' : '<not plain>'}[${v.map(strict).join(',')}]`;
  const proto = Object.getPrototypeOf(v) === Object.prototype ? '' : '<not plain>';
  return `${proto}{${Object.keys(v)
    .map((k) => `${JSON.stringify(k)}:${strict((v as Record<string, unknown>)[k])}`)
    .join(',')}}`;
}
const shape = (r: { value?: unknown; error?: string }) => (r.error !== undefined ? 'error' : strict(r.value));

const scopes: Array<[string, () => Scope]> = [
  ['the trigger as input', baseScope],
  ['an object input', () => ({ ...baseScope(), input: { body: { data: { workerId: 'from input' } } } })],
  ['an array input', () => ({ ...baseScope(), input: [{ body: 1 }, { body: 2 }] })],
  ['a string input', () => ({ ...baseScope(), input: 'abc' })],
  ['an undefined input', () => ({ ...baseScope(), input: undefined })],
  ['with $item and $index', () => ({ ...baseScope(), item: { id: 7 }, index: 3 })],
];

describe('direct evaluation answers what JSONata answers', () => {
  for (const [name, scope] of scopes) {
    it.each([...DIRECT, ...VIA_JSONATA])(`%s (${name})`, async (source) => {
      const s = scope();
      const expected = await byJsonata(source, s);
      const got = await byTemplate(source, s);
      expect(shape(got)).toBe(shape(expected));
    });
  }
});

describe('direct evaluation is used where it claims to be', () => {
  const read = (scope: Scope, name: string) =>
    name in scope && !['env', 'input'].includes(name) ? (scope as unknown as Record<string, unknown>)[name] : MISS;

  it.each(DIRECT)('%s is answered directly', (source) => {
    const direct = directEvaluator(jsonata(source));
    expect(direct).toBeDefined();
    expect(direct!(trigger, read, baseScope())).not.toBe(MISS);
  });

  it.each(VIA_JSONATA)('%s is left to JSONata', (source) => {
    let direct;
    try {
      direct = directEvaluator(jsonata(source));
    } catch {
      return; // does not even compile
    }
    if (direct) expect(direct(trigger, read, baseScope())).toBe(MISS);
  });

  it('an array input is left to JSONata for `$`, relative paths and constructors', () => {
    for (const source of ['$', 'body', "{'a': 1}"]) expect(directEvaluator(jsonata(source))!([1], read, baseScope())).toBe(MISS);
  });
});

/**
 * The bounded natives of engine/expression-guard.ts answer exactly what JSONata's own $sort,
 * $distinct and $pad answer (compared on small inputs against an unguarded expression), and
 * refuse what would run away.
 */
import jsonata from 'jsonata';
import { describe, expect, it } from 'vitest';
import { expressionLimits } from '../../src/definition/templates.js';
import { guardExpression } from '../../src/engine/expression-guard.js';

async function both(expr: string, input: unknown = {}) {
  const plain = jsonata(expr, expressionLimits);
  const guarded = jsonata(expr, expressionLimits);
  guardExpression(guarded);
  const run = (e: jsonata.Expression) =>
    e.evaluate(input, { trigger: input }).then(
      (v) => ({ value: JSON.parse(JSON.stringify(v ?? null)) }),
      (err: { code?: string; message?: string }) => ({ error: err.code }),
    );
  return { plain: await run(plain), guarded: await run(guarded) };
}

describe('bounded natives behave like JSONata', () => {
  it.each([
    '$sort([3, 1, 2])',
    '$sort(["b", "a", "c"])',
    '$sort([1])',
    '$sort([])',
    '$sort($trigger.none)',
    '$sort([1, "a"])',
    '$sort($trigger.people, function($l, $r) { $l.age > $r.age })',
    '$sort($trigger.people, function($l, $r) { $l.age < $r.age }).name',
    '$trigger.people^(age).name',
    '$distinct([1, 2, 1, "1", true, true, null, null])',
    '$distinct([{"a": 1, "b": [1, 2]}, {"b": [1, 2], "a": 1}, {"a": "1"}])',
    '$distinct($trigger.people.age)',
    '$distinct("x")',
    '$distinct([[1, 2], [1, 2], [2, 1]])',
    "$pad('ab', 5)",
    "$pad('ab', -5, '#')",
    "$pad('ab', 6, 'xy')",
    "$pad('ab', 1)",
    "$pad('😀', 3, '-')",
  ])('%s', async (expr) => {
    const input = {
      people: [
        { name: 'a', age: 30 },
        { name: 'b', age: 20 },
        { name: 'c', age: 30 },
        { name: 'd', age: 10 },
      ],
    };
    const r = await both(expr, input);
    expect(r.guarded).toEqual(r.plain);
  });
});

describe('bounded natives refuse what would run away', () => {
  it('$pad wider than the limit', async () => {
    const { guarded } = await both("$pad('', 1e8, 'x')");
    expect(guarded).toEqual({ error: 'HCM_LIMIT' });
  });

  it('$sort and $distinct of 100k items finish fast (JSONata needed seconds and gigabytes)', async () => {
    const items = Array.from({ length: 100_000 }, (_, i) => (i * 7919) % 100_003);
    const e = jsonata('[$sort($trigger.items)[0], $count($distinct($trigger.items))]', expressionLimits);
    guardExpression(e);
    expect(await e.evaluate({}, { trigger: { items } })).toEqual([0, 100_000]);
  });
});

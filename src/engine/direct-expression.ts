/**
 * Direct evaluation of the expressions most mappings are made of: a path of plain field names
 * from a binding or from `$` (`$trigger.body.data.workerId`, `$steps.shape.id`, `body.id`),
 * literals, and object and array constructors of those (`{'id': $trigger.body.id, 'n': 1}`).
 *
 * Why: JSONata's evaluator is asynchronous all the way down — every step of every evaluation
 * awaits, builds a sequence (with a closure of its own) and a frame for the bindings — so a
 * two-field object constructor costs tens of kilobytes of garbage and several microtask turns.
 * For these shapes the answer is a few property reads.
 *
 * The answer must be JSONata's, bit for bit, or nothing: whenever the data leaves the ground this
 * file is sure of — an array on the way (JSONata maps over it and flattens), a JSONata sequence,
 * an object JSONata treats as a function, input that is an array — the evaluator answers MISS and
 * the caller evaluates the expression with JSONata as before. Shapes it does not know are never
 * compiled here (`directEvaluator` answers undefined), so JSONata's errors stay JSONata's.
 * test/engine/direct-expression.test.ts compares both on hostile data.
 */
import type { Expression } from 'jsonata';

/** "Not sure: ask JSONata." */
export const MISS: unique symbol = Symbol('direct-expression.miss');

/**
 * Reads a binding of the evaluation `ctx` (`$trigger` → 'trigger'); MISS when it is not one of
 * the evaluation's own. (A reader and its context rather than a closure: no allocation per call.)
 */
export type BindingReader = (ctx: never, name: string) => unknown;

export type DirectEvaluator = (input: unknown, binding: BindingReader, ctx: unknown) => unknown;

interface AstNode {
  type: string;
  value?: unknown;
  steps?: AstNode[];
  lhs?: Array<[AstNode, AstNode]>;
  expressions?: AstNode[];
}

const compiled = new WeakMap<Expression, DirectEvaluator | null>();

/** The direct evaluator of a compiled expression, or undefined when its shape is not one of ours. */
export function directEvaluator(expression: Expression): DirectEvaluator | undefined {
  let d = compiled.get(expression);
  if (d === undefined) {
    d = compileNode(expression.ast() as AstNode);
    compiled.set(expression, d);
  }
  return d ?? undefined;
}

const hasOwn = (o: object, k: string) => Object.hasOwn(o, k);

/** A node carrying only these keys: any other (predicates, stages, group, focus, keepArray…) is JSONata's. */
function only(node: AstNode, keys: readonly string[]): boolean {
  for (const k of Object.keys(node)) if (k !== 'position' && !keys.includes(k)) return false;
  return true;
}

function compileNode(node: AstNode): DirectEvaluator | null {
  switch (node.type) {
    case 'string':
    case 'number':
    case 'value': {
      if (!only(node, ['type', 'value'])) return null;
      const value = node.value;
      return () => value;
    }
    case 'variable':
      return only(node, ['type', 'value']) ? variable(node.value as string) : null;
    case 'path':
      return only(node, ['type', 'steps']) ? path(node.steps ?? []) : null;
    case 'unary':
      if (node.value === '{' && only(node, ['type', 'value', 'lhs'])) return objectConstructor(node.lhs ?? []);
      if (node.value === '[' && only(node, ['type', 'value', 'expressions'])) return arrayConstructor(node.expressions ?? []);
      return null;
    default:
      return null;
  }
}

/** JSONata's sequences are arrays it made; their unwrapping rules are its own. */
const isSequence = (v: unknown) => Array.isArray(v) && (v as { sequence?: unknown }).sequence === true;

/** `$name` alone: the binding as it is; `$` the input (JSONata unwraps an array input: MISS). */
function variable(name: string): DirectEvaluator | null {
  if (name === '$') return null; // `$$`: the root, bound as JSONata wrapped it
  if (name === '') return (input) => (Array.isArray(input) ? MISS : input);
  return (_input, binding, ctx) => {
    const v = (binding as (ctx: unknown, name: string) => unknown)(ctx, name);
    return isSequence(v) ? MISS : v;
  };
}

/**
 * A path of field names, from a binding, from `$`, or from the input. JSONata looks a field up
 * only on an own property of a non-array object that is not a function; anything else yields
 * nothing, and a path that yields nothing is undefined. The last field's value comes back as it
 * is (a raw array included); an array before it would be mapped over: MISS.
 */
function path(steps: AstNode[]): DirectEvaluator | null {
  if (steps.length === 0) return null;
  const [first, ...rest] = steps;
  // `$trigger.a.b` starts at a binding; a relative path `a.b` at the input, as `$.a.b` does.
  const fromBinding = first!.type === 'variable';
  if (fromBinding && !only(first!, ['type', 'value'])) return null;
  const start = variable(fromBinding ? (first!.value as string) : '');
  const names = fromBinding ? rest : steps;
  if (!start || names.length === 0) return null;
  if (!names.every((s) => s.type === 'name' && typeof s.value === 'string' && only(s, ['type', 'value']))) return null;
  const keys = names.map((s) => s.value as string);
  const from = start;
  return (input, binding, ctx) => {
    let cur = from(input, binding, ctx);
    if (cur === MISS) return MISS;
    for (const key of keys) {
      if (cur === null || typeof cur !== 'object') return undefined;
      if (Array.isArray(cur)) return MISS;
      const o = cur as Record<string, unknown>;
      if (o._jsonata_function === true || o._jsonata_lambda === true) return MISS;
      if (!hasOwn(o, key)) return undefined;
      cur = o[key];
    }
    return isSequence(cur) ? MISS : cur;
  };
}

/**
 * `{'key': value, …}` with literal string keys, distinct and not JSONata's reserved ones (those
 * are errors JSONata reports). Keys whose value is undefined are left out, as JSONata does. The
 * values are evaluated against the input as the context; JSONata groups an array input: MISS.
 */
function objectConstructor(pairs: Array<[AstNode, AstNode]>): DirectEvaluator | null {
  const entries: Array<[string, DirectEvaluator]> = [];
  const seen = new Set<string>();
  for (const [k, v] of pairs) {
    if (k.type !== 'string' || !only(k, ['type', 'value']) || typeof k.value !== 'string') return null;
    if (k.value === '_jsonata_lambda' || k.value === '_jsonata_function' || seen.has(k.value)) return null;
    seen.add(k.value);
    const value = compileNode(v);
    if (!value) return null;
    entries.push([k.value, value]);
  }
  return (input, binding, ctx) => {
    if (Array.isArray(input)) return MISS;
    // JSONata builds the object without a prototype: `__proto__` is a key like any other.
    const out = Object.create(null) as Record<string, unknown>;
    for (const [key, value] of entries) {
      const v = value(input, binding, ctx);
      if (v === MISS) return MISS;
      if (v !== undefined) out[key] = v;
    }
    return out;
  };
}

/**
 * `[a, b, …]`: undefined items are left out; a nested constructor is one item; any other array
 * value would be spliced in by JSONata's append: MISS.
 */
function arrayConstructor(items: AstNode[]): DirectEvaluator | null {
  const compiledItems: Array<[DirectEvaluator, boolean]> = [];
  for (const item of items) {
    const c = compileNode(item);
    if (!c) return null;
    compiledItems.push([c, item.type === 'unary' && item.value === '[']);
  }
  return (input, binding, ctx) => {
    const out: unknown[] = [];
    for (const [item, nested] of compiledItems) {
      const v = item(input, binding, ctx);
      if (v === MISS) return MISS;
      if (v === undefined) continue;
      if (Array.isArray(v) && !nested) return MISS;
      out.push(v);
    }
    return out;
  };
}

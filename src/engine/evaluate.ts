/**
 * Evaluates value templates: literals as they are, env lookups from the environment (at run
 * time, never at validate time), JSONata expressions with their bindings and guardrails.
 */
import type { ValueTemplate } from '../definition/types.js';
import { setOwn } from '../common/own.js';
import { describeLocation } from '../definition/schema-validator.js';
import { directEvaluator, MISS } from './direct-expression.js';
import { ExpressionLimitError, guardExpression } from './expression-guard.js';
import { FileValueError, readFileValue } from './file-value.js';

/** The bindings of docs/authoring.md "Expressions": `$` is `$trigger`. */
export interface Scope {
  trigger: unknown;
  steps: Record<string, unknown>;
  errors: Record<string, unknown>;
  config: Record<string, unknown>;
  execution: Record<string, unknown>;
  state: Record<string, unknown>;
  item?: unknown;
  index?: number;
  /** The environment env values are read from. */
  env: NodeJS.ProcessEnv;
  /** `$failure` in onFailure steps. */
  failure?: unknown;
  /** Overrides `$` (e.g. a poll's items/key expressions read the poll's results). */
  input?: unknown;
}

export class EvaluationError extends Error {
  constructor(
    message: string,
    readonly pointer: string,
  ) {
    super(message);
    this.name = 'EvaluationError';
  }
}

export async function evaluateTemplate(t: ValueTemplate, scope: Scope): Promise<unknown> {
  switch (t.kind) {
    case 'literal':
      return t.value;
    case 'env': {
      const v = scope.env[t.name];
      if (v !== undefined) return v;
      if (t.hasDefault) return t.default;
      throw new EvaluationError(
        `environment variable ${t.name} is not set (needed by ${describeLocation(t.pointer)}); set it or give a default`,
        t.pointer,
      );
    }
    case 'file':
      try {
        return await readFileValue(t);
      } catch (err) {
        if (err instanceof FileValueError) throw new EvaluationError(err.message, t.pointer);
        throw err;
      }
    case 'array': {
      const out: unknown[] = [];
      for (const item of t.items) out.push(await evaluateTemplate(item, scope));
      return out;
    }
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [k, v] of t.entries) {
        const value = await evaluateTemplate(v, scope);
        if (value !== undefined) out[k] = value;
      }
      return out;
    }
    case 'expr': {
      // Plain paths, literals and constructors of them: read directly, the answer JSONata gives
      // (direct-expression.ts); anything else, or any doubt, goes to JSONata below.
      const input = 'input' in scope ? scope.input : scope.trigger;
      const direct = directEvaluator(t.expression);
      if (direct) {
        const value = direct(input, binding, scope);
        if (value !== MISS) return toPlain(value);
      }
      const bindings: Record<string, unknown> = {};
      for (const name of BINDING_NAMES) {
        const value = binding(scope, name);
        if (value !== MISS) bindings[name] = value;
      }
      try {
        guardExpression(t.expression);
        return toPlain(await t.expression.evaluate(input, bindings));
      } catch (err) {
        const e = err as { message?: string; code?: string };
        const where = `${describeLocation(t.pointer)} (line ${t.position.line}, column ${t.position.column})`;
        const guard = ['D1011', 'D1012', 'D2014', 'D2015'].includes(e.code ?? '') || err instanceof RangeError || err instanceof ExpressionLimitError;
        throw new EvaluationError(`expression ${guard ? 'exceeded a guardrail' : 'failed'} at ${where}: ${e.message ?? String(err)}`, t.pointer);
      }
    }
  }
}

/** The variables an evaluation binds (`$trigger` …); `$item` and `$index` only inside `forEach`. */
const ALWAYS = ['trigger', 'steps', 'errors', 'config', 'execution', 'state'] as const;
const BINDING_NAMES = [...ALWAYS, 'item', 'index', 'failure'] as const;
const ALWAYS_BOUND: ReadonlySet<string> = new Set(ALWAYS);

/**
 * The value of `$name` in an evaluation of `scope`; MISS for a name it does not bind. The one
 * definition of the bindings: the direct reader uses it, and JSONata's bindings are built from it.
 */
function binding(scope: Scope, name: string): unknown {
  if (ALWAYS_BOUND.has(name)) return scope[name as (typeof ALWAYS)[number]];
  if (name === 'item') return 'item' in scope ? scope.item : MISS;
  if (name === 'index') return scope.index !== undefined ? scope.index : MISS;
  if (name === 'failure') return scope.failure !== undefined ? scope.failure : MISS;
  return MISS;
}

/**
 * JSONata sequences and frozen arrays become plain JSON values; functions are dropped — JavaScript
 * functions and JSONata's own (`$uppercase`, `function($x){$x}`), which are objects: a lambda
 * holds its whole environment, so walking into it would store the bindings or overflow the stack.
 */
export function toPlain(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return typeof value === 'function' ? undefined : value;
  if (Array.isArray(value)) return Array.from(value, toPlain);
  if (isJsonataFunction(value)) return undefined;
  if (value instanceof Date) return value.toISOString();
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const p = toPlain(v);
    // A key named `__proto__` (from a caller's field or part name) is data, not a prototype write.
    if (p !== undefined) setOwn(out, k, p);
  }
  return out;
}

/**
 * A function JSONata made: a built-in or partial application (`_jsonata_function` with its
 * JavaScript implementation) or a lambda (`_jsonata_lambda` with its environment's `lookup`).
 * The JavaScript parts tell them from data that merely has those keys (parsed JSON has no functions).
 */
function isJsonataFunction(value: object): boolean {
  const o = value as { _jsonata_function?: unknown; implementation?: unknown; _jsonata_lambda?: unknown; environment?: { lookup?: unknown } };
  if (o._jsonata_function === true) return typeof o.implementation === 'function';
  if (o._jsonata_lambda === true) return typeof o.environment?.lookup === 'function';
  return false;
}

/**
 * JSONata's own truthiness ($boolean), so `if` means what it would inside an expression: empty
 * strings, arrays and objects, 0, null and undefined are false; an array is true when any item is.
 */
export function jsonataBoolean(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (Array.isArray(value)) return value.some(jsonataBoolean);
  if (typeof value === 'object') return Object.keys(value).length > 0;
  if (typeof value === 'string') return value.length > 0;
  if (typeof value === 'number') return value !== 0;
  return value === true;
}

/**
 * Turns values as written in YAML into templates: `{% … %}` strings become compiled JSONata
 * expressions (once per source text; checked at load, compiled at load or, when expression-check.ts
 * is sure they compile, when they first run), `{env: NAME, default}` becomes an env lookup for run time,
 * `{file: PATH, default}` a file read at run time (PATH resolved against the integration's folder now), objects
 * and arrays recurse. A syntax error is reported at the expression's line and column.
 */
import { dirname, isAbsolute, resolve } from 'node:path';
import jsonata, { type Expression } from 'jsonata';
import { surelyCompiles } from './expression-check.js';
import type { SourcePosition, ValueTemplate } from './types.js';
import type { YamlSource } from './yaml-source.js';
import { joinPointer } from './yaml-source.js';
import type { ProblemSink } from './problems.js';

const EXPRESSION = /^\s*\{%([\s\S]*)%\}\s*$/;

/** Guardrails applied to every evaluation: a runaway expression fails its step, never the process. */
export const expressionLimits = { timeout: 1_000, stack: 500, sequence: 1_000_000 };

export function expressionBody(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const m = EXPRESSION.exec(value);
  return m ? m[1] : undefined;
}

export function isEnvValue(value: unknown): value is { env: string; default?: unknown } {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return typeof (value as { env?: unknown }).env === 'string' && keys.every((k) => k === 'env' || k === 'default');
}

export function isFileValue(value: unknown): value is { file: string; default?: unknown } {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  const file = (value as { file?: unknown }).file;
  return typeof file === 'string' && file !== '' && keys.every((k) => k === 'file' || k === 'default');
}

/**
 * Compiled expressions by source text. Integrations repeat the same mappings a lot, and a
 * compiled expression keeps no state between evaluations (we never `assign` on it), so one
 * compiled copy serves every place it is written.
 */
const compiledExpressions = new Map<string, Expression>();

function compileExpression(body: string): Expression {
  let e = compiledExpressions.get(body);
  if (!e) {
    e = jsonata(body, expressionLimits);
    compiledExpressions.set(body, e);
  }
  return e;
}

/**
 * An expression that surely compiles (expression-check.ts), compiled when it first runs: jsonata's
 * parser is most of the cost of loading a file, and a large folder's expressions do not all run
 * soon. The property reads like a plain one; once compiled it is one.
 */
function lazyExpression(body: string, pointer: string, position: SourcePosition): ValueTemplate {
  const t = {
    kind: 'expr' as const,
    source: body.trim(),
    get expression(): Expression {
      const expression = compileExpression(body);
      Object.defineProperty(t, 'expression', { value: expression, configurable: true, enumerable: true, writable: true });
      return expression;
    },
    pointer,
    position,
  };
  return t;
}

/**
 * `dir`: the folder `{file: PATH}` values are relative to — the integration file's (default: the
 * folder of `src.file`, a path relative to the working directory or absolute).
 */
export function compileTemplate(
  value: unknown,
  pointer: string,
  src: YamlSource,
  problems: ProblemSink,
  dir: string = dirname(resolve(src.file)),
): ValueTemplate {
  const body = expressionBody(value);
  if (body !== undefined) {
    const position = src.positionOf(pointer);
    if (!compiledExpressions.has(body) && surelyCompiles(body)) return lazyExpression(body, pointer, position);
    try {
      const expression = compileExpression(body);
      return { kind: 'expr', source: body.trim(), expression, pointer, position };
    } catch (err) {
      const e = err as { message?: string; position?: number; token?: string };
      problems.add(
        pointer,
        `expression does not parse: ${e.message ?? String(err)}`,
        expressionErrorPosition(src, pointer, value as string, e.position),
      );
      return { kind: 'literal', value: null };
    }
  }
  if (isEnvValue(value)) {
    return { kind: 'env', name: value.env, default: value.default, hasDefault: 'default' in value, pointer };
  }
  if (isFileValue(value)) {
    const path = isAbsolute(value.file) ? value.file : resolve(dir, value.file);
    return { kind: 'file', path, written: value.file, default: value.default, hasDefault: 'default' in value, pointer };
  }
  if (Array.isArray(value)) {
    return { kind: 'array', items: value.map((v, i) => compileTemplate(v, joinPointer(pointer, i), src, problems, dir)) };
  }
  if (value && typeof value === 'object') {
    return {
      kind: 'object',
      entries: Object.entries(value).map(([k, v]) => [k, compileTemplate(v, joinPointer(pointer, k), src, problems, dir)] as [string, ValueTemplate]),
    };
  }
  return { kind: 'literal', value };
}

/** Where in the file a JSONata error offset lands (exact on single-line scalars). */
function expressionErrorPosition(src: YamlSource, pointer: string, text: string, errorOffset: number | undefined) {
  const base = src.positionOf(pointer);
  const scalar = src.scalarAt(pointer);
  if (errorOffset === undefined || !scalar?.singleLine) return base;
  const bodyStart = text.indexOf('{%') + 2;
  // jsonata reports the offset just past the offending token; step back to its start.
  const inBody = Math.max(0, errorOffset - 1);
  return { line: base.line, column: base.column + (scalar.quoted ? 1 : 0) + bodyStart + inBody };
}

/** Every expression inside a template, for reference checks. */
export function* expressionsIn(t: ValueTemplate | undefined): Generator<Extract<ValueTemplate, { kind: 'expr' }>> {
  if (!t) return;
  if (t.kind === 'expr') yield t;
  else if (t.kind === 'object') for (const [, v] of t.entries) yield* expressionsIn(v);
  else if (t.kind === 'array') for (const v of t.items) yield* expressionsIn(v);
}

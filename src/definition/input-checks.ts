/**
 * Checks a step's inputs against its action's own input schema at load time: unknown inputs,
 * missing required ones, and every literal value (types, enums, ranges such as Limit 1–100).
 * Expressions and env values are checked by the engine once they have a value.
 */
import type { Ajv2020, ErrorObject } from 'ajv/dist/2020.js';
import { headerMapProblems, headerValueProblem } from '../common/http-header-syntax.js';
import type { ActionDeclaration, InputDecl } from '../connectors/types.js';
import { describeInput, inputSchema, inputSchemaKey } from './action-schema.js';
import { inputValidators as generated } from './generated/input-validators.js';
import type { ProblemSink } from './problems.js';
import { createAjv, enumGot, explainErrors } from './schema-validator.js';
import { closest } from './suggest.js';
import { expressionBody, isEnvValue, isFileValue } from './templates.js';
import { joinPointer } from './yaml-source.js';

/** A validator as both the generated code and ajv's compile return it. */
export interface InputValidator {
  (value: unknown): boolean;
  errors?: ErrorObject[] | null;
}

const precompiled = generated as unknown as Record<string, InputValidator>;
const validators = new Map<string, InputValidator>();
let ajv: Ajv2020 | undefined;

/**
 * The validator of one input of one action: the generated one for its schema (`npm run docs`,
 * validator-code.ts), else — a connector outside the catalog — compiled once with ajv.
 */
export function inputValidator(action: ActionDeclaration, name: string): InputValidator {
  const key = `${action.key}#${name}`;
  let v = validators.get(key);
  if (!v) {
    const schema = inputSchema(action.inputs[name]!);
    v = precompiled[inputSchemaKey(schema)] ?? (ajv ??= createAjv()).compile(schema);
    validators.set(key, v);
  }
  return v;
}

/** Whether a value still holds an expression, env lookup or file read somewhere inside. */
export function isDynamic(value: unknown): boolean {
  if (expressionBody(value) !== undefined || isEnvValue(value) || isFileValue(value)) return true;
  if (Array.isArray(value)) return value.some(isDynamic);
  if (value && typeof value === 'object') return Object.values(value).some(isDynamic);
  return false;
}

export function checkInputs(
  action: ActionDeclaration,
  inputs: Record<string, unknown>,
  pointer: string,
  problems: ProblemSink,
  inputsWritten: boolean,
): void {
  const declared = Object.keys(action.inputs);
  for (const [name, value] of Object.entries(inputs)) {
    const decl = action.inputs[name];
    const at = joinPointer(pointer, name);
    if (!decl) {
      const hint = closest(name, declared);
      problems.add(
        at,
        `${action.key} has no input "${name}"${hint ? ` — did you mean "${hint}"?` : ''}; its inputs: ${declared.join(', ') || 'none'}`,
        undefined,
        'key',
      );
      continue;
    }
    // Header names are known even when some values are expressions: checked at their own line.
    for (const p of syntaxProblems(decl, value, (v) => !isDynamic(v))) {
      problems.add(joinPointer(at, ...p.path), `input "${name}" of ${action.key}: ${p.problem}`, undefined, p.part);
    }
    if (isDynamic(value)) continue;
    const checked = checkInputValue(action, name, value);
    if ('problem' in checked) problems.add(at, `input "${name}" of ${action.key} ${checked.problem}`);
  }
  for (const [name, decl] of Object.entries(action.inputs)) {
    if (decl.required && !(name in inputs)) {
      problems.add(
        inputsWritten ? pointer : pointer.replace(/\/inputs$/, ''),
        `${action.key} needs input "${name}" (${decl.label ?? describeInput(decl)})`,
        undefined,
        inputsWritten ? 'key' : 'value',
      );
    }
  }
}

/**
 * One input value against its declaration — the same check at load time (literals) and at run
 * time (evaluated values): dates are read as anything Date understands (ISO-8601, epoch ms) and
 * normalised to ISO-8601, then the value is checked against the input's JSON Schema.
 */
export function checkInputValue(action: ActionDeclaration, name: string, value: unknown): { value: unknown } | { problem: string } {
  const decl = action.inputs[name]!;
  let v = value;
  if (decl.type === 'date' && (typeof v === 'string' || typeof v === 'number')) {
    const d = new Date(v);
    if (Number.isNaN(d.getTime())) return { problem: `must be a date (ISO-8601 or epoch milliseconds); got ${preview(value)}` };
    v = d.toISOString();
  }
  const validate = inputValidator(action, name);
  if (validate(v)) return { value: v };
  const first = explainErrors(validate.errors ?? [])[0];
  const detail = first?.pointer ? ` (${first.pointer.slice(1).replace(/\//g, '.')}: ${first.message.replace(/^.*? must/, 'must')})` : '';
  // A whole-value enum names the closest allowed value too, like every other enum mistake.
  if (decl.enum && !detail) return { problem: `must be ${describeInput(decl)}${enumGot(value, decl.enum)}` };
  return { problem: `must be ${describeInput(decl)}${detail}; got ${preview(value)}` };
}

/**
 * What an input's declared `syntax` refuses in a value (HTTP header names and values: Node cannot
 * send them, src/common/http-header-syntax.ts): each with the path below the input and whether it
 * is about a key or a value. `isKnown` tells literal parts from those still to be computed.
 */
export function syntaxProblems(
  decl: InputDecl,
  value: unknown,
  isKnown: (v: unknown) => boolean = () => true,
): { path: string[]; part: 'key' | 'value'; problem: string }[] {
  if (decl.syntax === 'httpHeaders' && value && typeof value === 'object' && !Array.isArray(value) && !isEnvValue(value)) {
    return headerMapProblems(value as Record<string, unknown>, isKnown).map((p) => ({
      path: [p.name],
      part: p.part === 'name' ? 'key' : 'value',
      problem: p.problem,
    }));
  }
  if (decl.syntax === 'httpHeaderValue' && typeof value === 'string' && isKnown(value)) {
    const problem = headerValueProblem(value);
    if (problem) return [{ path: [], part: 'value', problem: `${JSON.stringify(value)} ${problem}` }];
  }
  return [];
}

function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

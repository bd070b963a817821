/**
 * Checks a step's inputs against its action's own input schema at load time: unknown inputs,
 * missing required ones, and every literal value (types, enums, ranges such as Limit 1–100).
 * Expressions and env values are checked by the engine once they have a value.
 */
import type { ValidateFunction } from 'ajv';
import type { ActionDeclaration } from '../connectors/types.js';
import { describeInput, inputSchema } from './action-schema.js';
import type { ProblemSink } from './problems.js';
import { createAjv, explainErrors } from './schema-validator.js';
import { closest } from './suggest.js';
import { expressionBody, isEnvValue } from './templates.js';
import { joinPointer, type YamlSource } from './yaml-source.js';

const ajv = createAjv();
const validators = new Map<string, ValidateFunction>();

/** The validator of one input of one action, compiled once. */
export function inputValidator(action: ActionDeclaration, name: string): ValidateFunction {
  const key = `${action.key}#${name}`;
  let v = validators.get(key);
  if (!v) {
    v = ajv.compile(inputSchema(action.inputs[name]!));
    validators.set(key, v);
  }
  return v;
}

/** Whether a value still holds an expression or env lookup somewhere inside. */
export function isDynamic(value: unknown): boolean {
  if (expressionBody(value) !== undefined || isEnvValue(value)) return true;
  if (Array.isArray(value)) return value.some(isDynamic);
  if (value && typeof value === 'object') return Object.values(value).some(isDynamic);
  return false;
}

export function checkInputs(
  action: ActionDeclaration,
  inputs: Record<string, unknown>,
  pointer: string,
  src: YamlSource,
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
    if (isDynamic(value)) continue;
    const validate = inputValidator(action, name);
    if (!validate(value)) {
      const first = explainErrors(validate.errors ?? [])[0];
      const detail = first && first.pointer ? ` (${first.pointer.slice(1).replace(/\//g, '.')}: ${first.message.replace(/^.*? must/, 'must')})` : '';
      problems.add(at, `input "${name}" of ${action.key} must be ${describeInput(decl)}${detail}; got ${preview(value)}`);
    }
  }
  for (const [name, decl] of Object.entries(action.inputs)) {
    if (decl.required && !(name in inputs)) {
      problems.add(inputsWritten ? pointer : pointer.replace(/\/inputs$/, ''), `${action.key} needs input "${name}" (${decl.label ?? describeInput(decl)})`, undefined, inputsWritten ? 'key' : 'value');
    }
  }
}

function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/**
 * Evaluated inputs → what the action receives: declaration defaults applied, then checked against
 * the same schema the validator used at load time (so a computed Limit of 500 fails its step the
 * way a literal one fails validation).
 */
import { ActionError } from '../common/errors.js';
import type { ActionDeclaration } from '../connectors/types.js';
import { describeInput } from '../definition/action-schema.js';
import { inputValidator } from '../definition/input-checks.js';
import { explainErrors } from '../definition/schema-validator.js';

export function prepareInputs(action: ActionDeclaration, evaluated: unknown): Record<string, unknown> {
  const given = (evaluated && typeof evaluated === 'object' ? evaluated : {}) as Record<string, unknown>;
  const inputs: Record<string, unknown> = {};
  for (const [name, decl] of Object.entries(action.inputs)) {
    let value = given[name];
    if ((value === undefined || value === null) && decl.default !== undefined) value = decl.default;
    if (value === undefined || value === null) {
      if (decl.required) throw new ActionError(`input "${name}" is required but has no value`, { code: 'invalid_input' });
      continue;
    }
    if (decl.type === 'date') value = normalizeDate(name, value);
    const validate = inputValidator(action, name);
    if (!validate(value)) {
      const first = explainErrors(validate.errors ?? [])[0];
      const detail = first?.pointer ? ` (${first.pointer.slice(1).replace(/\//g, '.')}: ${first.message.replace(/^.*? must/, 'must')})` : '';
      throw new ActionError(`input "${name}" must be ${describeInput(decl)}${detail}; got ${preview(value)}`, { code: 'invalid_input' });
    }
    inputs[name] = value;
  }
  for (const name of Object.keys(given)) {
    if (!(name in action.inputs) && given[name] !== undefined) {
      throw new ActionError(`unknown input "${name}"; inputs of ${action.key}: ${Object.keys(action.inputs).join(', ')}`, { code: 'invalid_input' });
    }
  }
  return inputs;
}

/** Dates are sent as ISO-8601: accept anything Date can read, and epoch milliseconds. */
function normalizeDate(name: string, value: unknown): unknown {
  if (typeof value !== 'string' && typeof value !== 'number') return value;
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) throw new ActionError(`input "${name}" must be a date (ISO-8601), got ${preview(value)}`, { code: 'invalid_input' });
  return d.toISOString();
}

function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
